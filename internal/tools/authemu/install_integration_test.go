package authemu

import (
	"context"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tallycounters/tally/internal/testkit/emulatortest"
)

// TestPinnedCLI finds the Firebase CLI as the tests and serve do: the
// version pinned in internal/tools/firebase, installed there once if it is not yet
// (internal/tools/npmci's TestInstallOnce shows the once), and it is 15.x.
func TestPinnedCLI(t *testing.T) {
	emulatortest.Without(t, "npm")
	bin, err := Locate(context.Background(), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "--version").CombinedOutput()
	if err != nil || !strings.HasPrefix(strings.TrimSpace(string(out)), "15.") {
		t.Errorf("%s --version: %q, %v; want 15.x", bin, out, err)
	}
}

// TestCLIOutsideTheRepository: a tally built and run outside the
// repository (here, from a temporary directory) finds the same pinned CLI,
// in the machine's cache, from the pins the binary carries.
func TestCLIOutsideTheRepository(t *testing.T) {
	emulatortest.Without(t, "npm")
	inside, err := Locate(context.Background(), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	outside, err := Locate(context.Background(), io.Discard)
	if err != nil {
		t.Fatalf("outside the repository: %v", err)
	}
	a, errA := filepath.EvalSymlinks(inside)
	b, errB := filepath.EvalSymlinks(outside)
	if errA != nil || errB != nil || a != b {
		t.Errorf("inside the repository the CLI is %s (%v), outside %s (%v); want the same install", a, errA, b, errB)
	}
}
