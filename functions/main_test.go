package functions

import (
	"testing"

	"github.com/tallycounters/tally/internal/emulatortest"
)

func TestMain(m *testing.M) { emulatortest.Main(m) }
