// Package layouttest hands a test the public form of a layout it built
// of tally's internals, for the configurations an app builds (counter's,
// increment's, rollup's, setup's), which hold only the public one.
package layouttest

import (
	"github.com/tallycounters/tally/counter"
	"github.com/tallycounters/tally/internal/core"
)

// Public is l as counter.Layout.
func Public(l core.Layout) counter.Layout { return core.ToPublic(l).(counter.Layout) }
