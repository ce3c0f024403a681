package deploy

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/tools/authemu"
)

// TestMain builds the tally command once for every run of deploy.sh here
// (TALLY_BIN), rather than once per run: the quick tier's dry runs too.
func TestMain(m *testing.M) {
	flag.Parse()
	emulatortest.ManyAtOnce()
	dir, err := os.MkdirTemp("", "tally-bin-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: %v\n", err)
		os.Exit(1)
	}
	bin := filepath.Join(dir, "tally")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/tally").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: go build ./cmd/tally: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	os.Setenv("TALLY_BIN", bin)
	code := m.Run()
	authemu.StopShared()
	os.RemoveAll(dir)
	os.Exit(code)
}
