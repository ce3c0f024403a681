package authemu

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/tallycounters/tally/internal/emulatortest"
)

// TestPinnedCLI finds the Firebase CLI as the tests and serve do: the
// version pinned in tools/firebase, installed there once if it is not yet
// (internal/npmci's TestInstallOnce shows the once), and it is 15.x.
func TestPinnedCLI(t *testing.T) {
	emulatortest.Without(t, "npm")
	bin, err := Locate()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "--version").CombinedOutput()
	if err != nil || !strings.HasPrefix(strings.TrimSpace(string(out)), "15.") {
		t.Errorf("%s --version: %q, %v; want 15.x", bin, out, err)
	}
}
