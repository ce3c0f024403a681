package rollup

import (
	"math"

	"github.com/googleapis/google-cloudevents-go/cloud/firestoredata"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/core/aggregate"
)

// leftOut are the greatest and least of the document parent, over the
// children of src, whose field child holds with no finite number in it
// (a string, null, NaN, an infinity): each leaves the child out.
func leftOut(l core.Layout, parent, src string, child *firestoredata.Document) []string {
	var out []string
	for _, a := range l.Aggregates(parent) {
		if a.Source() != src || a.Op != aggregate.OpMax && a.Op != aggregate.OpMin {
			continue
		}
		v, ok := child.GetFields()[a.Of]
		if !ok {
			continue
		}
		switch x := v.GetValueType().(type) {
		case *firestoredata.Value_IntegerValue:
			continue
		case *firestoredata.Value_DoubleValue:
			if !math.IsNaN(x.DoubleValue) && !math.IsInf(x.DoubleValue, 0) {
				continue
			}
		}
		out = append(out, a.Field)
	}
	return out
}
