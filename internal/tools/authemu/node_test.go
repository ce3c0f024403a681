package authemu

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// script writes an executable shell script named name into a new
// directory and returns the directory.
func script(t *testing.T, name, body string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Debian 12's own Node.js is 18; the pinned CLI needs 20 and would exit at
// once. Locate says so before it installs anything.
func TestLocateRefusesAnOldNode(t *testing.T) {
	dir := script(t, "node", "echo v18.20.4")
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("TALLY_FIREBASE", "")
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Chdir(t.TempDir()) // outside the repository: the machine's cache
	var log strings.Builder
	_, err := Locate(context.Background(), &log)
	if err == nil || !strings.Contains(err.Error(), "needs Node.js 20 or later, and "+filepath.Join(dir, "node")+" is v18.20.4") {
		t.Fatalf("Locate with node v18: %v", err)
	}
	if log.Len() > 0 {
		t.Errorf("Locate with node v18 installed something: %s", log.String())
	}
}

// A CLI that exits before its emulator answers is quoted in the error.
func TestStartSaysWhatTheCLISaid(t *testing.T) {
	dir := script(t, "firebase", "echo 'Firebase CLI v15 is incompatible with Node.js v18.20.4'; exit 1")
	t.Setenv("TALLY_FIREBASE", filepath.Join(dir, "firebase"))
	_, err := Start(context.Background(), "demo-tally", nil)
	if !errors.Is(err, errExited) || !strings.Contains(err.Error(), "it said:\nFirebase CLI v15 is incompatible with Node.js v18.20.4") {
		t.Fatalf("Start with a CLI that exits: %v", err)
	}
}
