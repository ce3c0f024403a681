package npmci

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tallycounters/tally/internal/testkit/emulatortest"
)

// TestInstallOnce has two callers install one pinned package at once: one
// installs it, with npm ci, into the user's cache directory, says so and
// how far it has got; the other waits for it and finds it there; a third
// call has nothing to do. A second clone with the same pins installs
// nothing: it links to the same packages. Once the cache is cleared, a
// call installs them again.
func TestInstallOnce(t *testing.T) {
	emulatortest.Without(t, "npm")
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Fatalf("npm: %v (install Node.js and npm)", err)
	}
	root := t.TempDir()
	cache := filepath.Join(root, "cache")
	t.Setenv("XDG_CACHE_HOME", cache)
	defer func(d time.Duration) { progressEvery = d }(progressEvery)
	progressEvery = time.Millisecond // npm ci takes far longer: it reports its progress

	dep := filepath.Join(root, "dep")
	os.MkdirAll(dep, 0o755)
	os.WriteFile(filepath.Join(dep, "package.json"), []byte(`{"name": "dep", "version": "1.0.0"}`), 0o644)
	pack := exec.Command(npm, "pack", "--silent", "--pack-destination", root)
	pack.Dir = dep
	if out, err := pack.CombinedOutput(); err != nil {
		t.Fatalf("npm pack: %v\n%s", err, out)
	}
	tarball := filepath.Join(root, "dep-1.0.0.tgz")
	first, second := filepath.Join(root, "clone1", "fixture"), filepath.Join(root, "clone2", "fixture")
	fixture(t, npm, first, tarball)
	fixture(t, npm, second, tarball)
	want := filepath.Join("dep", "package.json")

	var wg sync.WaitGroup
	installed := make([]bool, 2)
	logs := make([]bytes.Buffer, 2)
	for i := range 2 {
		wg.Go(func() {
			var err error
			if installed[i], err = Install(context.Background(), first, want, "the fixture", &logs[i]); err != nil {
				t.Errorf("caller %d: %v\n%s", i, err, logs[i].String())
			}
		})
	}
	wg.Wait()
	if installed[0] == installed[1] {
		t.Fatalf("installed by caller 0: %v, by caller 1: %v; want exactly one", installed[0], installed[1])
	}
	said := logs[0].String() + logs[1].String()
	for _, line := range []string{"installing the fixture pinned in " + first + ", once for this machine", "still installing", "installed in "} {
		if strings.Count(said, line) < 1 {
			t.Errorf("the callers said:\n%s\nwant %q", said, line)
		}
	}
	if strings.Count(said, "installing the fixture") != 1 {
		t.Errorf("the callers said:\n%s\nwant one 'installing the fixture'", said)
	}
	target, err := os.Readlink(filepath.Join(first, "node_modules"))
	if err != nil || !strings.HasPrefix(target, cache) {
		t.Errorf("%s/node_modules links to %q (%v); want the packages in the cache, %s", first, target, err, cache)
	}
	if again, err := Install(context.Background(), first, want, "the fixture", &logs[0]); err != nil || again {
		t.Errorf("a third call: installed %v, %v; want nothing to do", again, err)
	}

	var log bytes.Buffer
	if again, err := Install(context.Background(), second, want, "the fixture", &log); err != nil || again {
		t.Errorf("the second clone: installed %v, %v; want nothing to do\n%s", again, err, log.String())
	}
	if other, _ := os.Readlink(filepath.Join(second, "node_modules")); other != target {
		t.Errorf("the second clone's node_modules links to %q, want %q", other, target)
	}
	if !strings.Contains(log.String(), "installed already") {
		t.Errorf("the second clone's install said %q; want it to say the packages are installed already", log.String())
	}

	os.RemoveAll(cache)
	if again, err := Install(context.Background(), second, want, "the fixture", &log); err != nil || !again {
		t.Errorf("after the cache was cleared: installed %v, %v; want an install\n%s", again, err, log.String())
	}
	if _, err := os.Stat(filepath.Join(second, "node_modules", want)); err != nil {
		t.Errorf("after the cache was cleared and the install: %v", err)
	}
}
