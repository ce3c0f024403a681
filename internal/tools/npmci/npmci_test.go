package npmci

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gofrs/flock"
)

// fixture writes a small package of the test's own, with a dependency on
// a local tarball (no registry needed), pinned by a lockfile, into dir.
func fixture(t *testing.T, npm, dir, tarball string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	pkg := `{"name": "fixture", "version": "1.0.0", "private": true, "dependencies": {"dep": "file:` + tarball + `"}}`
	if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(pkg), 0o644); err != nil {
		t.Fatal(err)
	}
	lock := exec.Command(npm, "install", "--package-lock-only", "--no-audit", "--no-fund", "--offline")
	lock.Dir = dir
	if out, err := lock.CombinedOutput(); err != nil {
		t.Fatalf("npm install --package-lock-only: %v\n%s", err, out)
	}
}

// TestWaitSaysWhoAndStops: a caller that finds another process installing
// says which process holds the lock, and stops waiting when its context
// ends (as serve's does on Ctrl-C), having installed nothing.
func TestWaitSaysWhoAndStops(t *testing.T) {
	dir := t.TempDir()
	holder := flock.New(filepath.Join(dir, ".install.lock"))
	if err := holder.Lock(); err != nil {
		t.Fatal(err)
	}
	defer holder.Unlock()
	os.WriteFile(filepath.Join(dir, ".install.holder"), []byte("process 4242 on here, since 12:00:00"), 0o644)

	ctx, cancel := context.WithCancel(context.Background())
	var buf bytes.Buffer
	log := &lockedWriter{w: &buf} // npmci's own writer for many goroutines
	said := func() string {
		log.mu.Lock()
		defer log.mu.Unlock()
		return buf.String()
	}
	ran := false
	done := make(chan error, 1)
	go func() {
		_, err := job{what: "the fixture", log: log}.locked(ctx, dir, func() bool { return false }, func() error { ran = true; return nil })
		done <- err
	}()
	for !strings.Contains(said(), "process 4242") {
		time.Sleep(10 * time.Millisecond) // until it says whom it waits for
	}
	cancel()
	if err := <-done; err == nil || !strings.Contains(err.Error(), "stopped waiting") || ran {
		t.Errorf("after its context ended: %v, installed: %v; want it to stop waiting, having installed nothing", err, ran)
	}
	if !strings.Contains(said(), "another process to install the fixture (process 4242 on here") {
		t.Errorf("it said %q; want whom it waits for", said())
	}
}
