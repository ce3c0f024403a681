// Package layouttest hands a test the settings of a layout it built of
// tally's internals, for the configurations an app builds (counter's,
// increment's, rollup's, setup's), which hold only the settings.
package layouttest

import (
	"fmt"
	"reflect"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/layout"
)

// Public is l as the settings that give it. It panics where they read as
// another layout than l, which a test that built l by hand could make.
func Public(l core.Layout) layout.Layout {
	s := l.Settings()
	got := core.MustParse(s)
	if !reflect.DeepEqual(got.Docs, l.Docs) || !reflect.DeepEqual(got.Windows, l.Windows) || got.Zone.String() != s.TimeZone {
		panic(fmt.Sprintf("layouttest: %+v reads as another layout than the test's", s))
	}
	return s
}
