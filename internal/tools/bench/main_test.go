package bench

import (
	"os"
	"testing"
)

// TestMain lets the test binary serve as a Rollup instance, which the
// bench starts as a copy of its own program.
func TestMain(m *testing.M) {
	InstanceMain()
	os.Exit(m.Run())
}
