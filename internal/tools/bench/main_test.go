package bench

import (
	"flag"
	"os"
	"testing"

	"github.com/tallycounters/tally/internal/testkit/emulatortest"
)

// TestMain lets the test binary serve as a Rollup instance, which the
// bench starts as a copy of its own program.
func TestMain(m *testing.M) {
	InstanceMain()
	flag.Parse()
	emulatortest.ManyAtOnce()
	os.Exit(m.Run())
}
