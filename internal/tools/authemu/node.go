package authemu

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"

	"github.com/tallycounters/tally/internal/tools/firebase"
)

// nodeRunsPins says, before anything is installed, when the node on the
// PATH is older than the pinned CLI needs: the CLI would exit at once
// (Debian 12's and Ubuntu 24.04's own nodejs is 18). No node is not an
// error here: Locate then says how to get one.
func nodeRunsPins(ctx context.Context) error {
	need := firebase.NodeMajor()
	path, err := exec.LookPath("node")
	if err != nil || need == 0 {
		return nil
	}
	out, err := exec.CommandContext(ctx, path, "--version").Output()
	if err != nil {
		return fmt.Errorf("authemu: %s --version: %w", path, err)
	}
	version := strings.TrimSpace(string(out))
	major, _, _ := strings.Cut(strings.TrimPrefix(version, "v"), ".")
	if n, err := strconv.Atoi(major); err == nil && n < need {
		return fmt.Errorf("authemu: the Firebase CLI that tally pins (for its Auth emulator) needs Node.js %d or later, "+
			"and %s is %s: install a newer Node.js (docs/prerequisites.md in the repository says how, by system; "+
			"Debian 12's and Ubuntu 24.04's own nodejs is 18), or set TALLY_FIREBASE to a firebase command that runs here",
			need, path, version)
	}
	return nil
}
