package authemu

import (
	"bytes"
	"github.com/tallycounters/tally/internal/emulatortest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestInstallOnce copies the pinned tools/firebase, without its CLI, and
// has two callers install it at once: one installs it, with npm, and says
// so; the other waits for it and finds it there; the CLI then runs.
func TestInstallOnce(t *testing.T) {
	emulatortest.Without(t, "npm")
	dir := filepath.Join(t.TempDir(), "tools", "firebase")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"package.json", "package-lock.json"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "tools", "firebase", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	installed := make([]bool, 2)
	logs := make([]bytes.Buffer, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			if installed[i], err = Install(dir, &logs[i]); err != nil {
				t.Errorf("caller %d: %v\n%s", i, err, logs[i].String())
			}
		}()
	}
	wg.Wait()
	if installed[0] == installed[1] {
		t.Fatalf("installed by caller 0: %v, by caller 1: %v; want exactly one", installed[0], installed[1])
	}
	said := logs[0].String() + logs[1].String()
	if strings.Count(said, "installing the Firebase CLI") != 1 {
		t.Errorf("the callers said:\n%s\nwant one 'installing the Firebase CLI'", said)
	}
	if again, err := Install(dir, &logs[0]); err != nil || again {
		t.Errorf("a third call: installed %v, %v; want nothing to do", again, err)
	}
	out, err := exec.Command(filepath.Join(dir, "node_modules", ".bin", "firebase"), "--version").CombinedOutput()
	if err != nil || !strings.HasPrefix(strings.TrimSpace(string(out)), "15.") {
		t.Errorf("the installed firebase --version: %q, %v; want 15.x", out, err)
	}
}
