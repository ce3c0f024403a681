package increment

import (
	"testing"

	"github.com/tallycounters/tally/internal/authemu"
	"github.com/tallycounters/tally/internal/emulatortest"
)

func TestMain(m *testing.M) { emulatortest.Main(m, authemu.StopShared) }
