package web_test

import (
	"flag"
	"os"
	"testing"

	"github.com/tallycounters/tally/internal/testkit/emulatortest"
)

// TestMain runs the browser tests eight at once: each mostly waits, for
// its stack, its Auth emulator and its browser.
func TestMain(m *testing.M) {
	flag.Parse()
	emulatortest.ManyAtOnce()
	os.Exit(m.Run())
}
