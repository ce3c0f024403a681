package setup

import (
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/tallycounters/tally/internal/testkit/emulatortest"
)

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		// The tests that need the emulator skip, saying so; an example
		// cannot, so it is left out by name.
		fmt.Fprintln(os.Stderr, "setup: -short leaves out ExampleNew: it needs the emulator")
		flag.Set("test.run", "^Test")
	}
	emulatortest.Main(m)
}
