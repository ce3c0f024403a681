package increment

import (
	"testing"

	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/tools/authemu"
)

func TestMain(m *testing.M) { emulatortest.Main(m, authemu.StopShared) }
