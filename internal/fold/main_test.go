package fold_test

import (
	"testing"

	"github.com/tallycounters/tally/internal/testkit/emulatortest"
)

func TestMain(m *testing.M) { emulatortest.Main(m) }
