package npmci

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestInstallOnce has two callers install one pinned package at once: one
// installs it, with npm ci, and says so; the other waits for it and finds
// it there; a third call has nothing to do. The package is a small one of
// the test's own, with a local dependency, so that no registry is needed.
func TestInstallOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("needs npm: left out by -short")
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Fatalf("npm: %v (install Node.js and npm)", err)
	}
	dir := t.TempDir()
	for name, text := range map[string]string{
		"package.json":     `{"name": "fixture", "version": "1.0.0", "private": true, "dependencies": {"dep": "file:dep"}}`,
		"dep/package.json": `{"name": "dep", "version": "1.0.0"}`,
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	lock := exec.Command(npm, "install", "--package-lock-only", "--no-audit", "--no-fund", "--offline")
	lock.Dir = dir
	if out, err := lock.CombinedOutput(); err != nil {
		t.Fatalf("npm install --package-lock-only: %v\n%s", err, out)
	}
	var wg sync.WaitGroup
	installed := make([]bool, 2)
	logs := make([]bytes.Buffer, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			if installed[i], err = Install(dir, filepath.Join("dep", "package.json"), "the fixture", &logs[i]); err != nil {
				t.Errorf("caller %d: %v\n%s", i, err, logs[i].String())
			}
		}()
	}
	wg.Wait()
	if installed[0] == installed[1] {
		t.Fatalf("installed by caller 0: %v, by caller 1: %v; want exactly one", installed[0], installed[1])
	}
	if said := logs[0].String() + logs[1].String(); strings.Count(said, "installing the fixture") != 1 {
		t.Errorf("the callers said:\n%s\nwant one 'installing the fixture'", said)
	}
	if again, err := Install(dir, filepath.Join("dep", "package.json"), "the fixture", &logs[0]); err != nil || again {
		t.Errorf("a third call: installed %v, %v; want nothing to do", again, err)
	}
}
