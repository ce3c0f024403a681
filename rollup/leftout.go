package rollup

import (
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
		var x any // as the firestore package reads it: only numbers matter
		switch t := v.GetValueType().(type) {
		case *firestoredata.Value_IntegerValue:
			x = t.IntegerValue
		case *firestoredata.Value_DoubleValue:
			x = t.DoubleValue
		}
		if !aggregate.Compared(x) {
			out = append(out, a.Field)
		}
	}
	return out
}
