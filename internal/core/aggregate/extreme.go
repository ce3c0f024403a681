package aggregate

import (
	"cmp"
	"math"
	"math/big"
)

// The greatest or least of a field over children (max, min) is kept as a
// sum is: a part of a valued source holds a record of each child's value
// (records.go), and its own greatest or least finite number among them;
// the aggregate is the greatest or least over the parts. A child's edit
// or deletion refolds its part from its records, so deleting the child
// that holds the greatest brings the next, with no read of any other
// child. Values that are no number, NaN and the infinities are left out;
// over none, the aggregate is null, as an average over none is.

// extreme reports whether op keeps a greatest or least value.
func extreme(op string) bool { return op == OpMax || op == OpMin }

// extremum is the greatest (or least) finite number added so far, if ok.
type extremum struct {
	v  Num
	ok bool
	n  int64 // finite numbers added
}

// add takes v into e, for op, if it is a finite number. Of equal values,
// an integer is kept over a double, so that the outcome does not depend
// on the order of the parts.
func (e *extremum) add(op string, v Num) {
	if !finite(v) {
		return
	}
	e.n++
	if !e.ok {
		e.v, e.ok = v, true
		return
	}
	c := cmpNum(v, e.v)
	if op == OpMax && c > 0 || op == OpMin && c < 0 || c == 0 && v.Kind == kindInt && e.v.Kind == kindDouble {
		e.v = v
	}
}

// value is e as Firestore stores it: an int64 or a float64, or nil if no
// number was added.
func (e extremum) value() any {
	switch {
	case !e.ok:
		return nil
	case e.v.Kind == kindInt:
		return e.v.I
	}
	return e.v.F
}

// Compared reports whether a greatest or a least takes v, a child's
// value as the firestore package reads it: a finite number.
func Compared(v any) bool { return finite(numOf(v)) }

// finite reports whether v is an integer, or a double neither NaN nor
// infinite.
func finite(v Num) bool {
	return v.Kind == kindInt || v.Kind == kindDouble && !math.IsNaN(v.F) && !math.IsInf(v.F, 0)
}

// cmpNum compares two finite numbers exactly, an integer with a double
// too (past 2^53 a double does not hold every integer).
func cmpNum(a, b Num) int {
	switch {
	case a.Kind == kindInt && b.Kind == kindInt:
		return cmp.Compare(a.I, b.I)
	case a.Kind == kindDouble && b.Kind == kindDouble:
		return cmp.Compare(a.F, b.F)
	}
	return exact(a).Cmp(exact(b))
}

// exact is a finite number as a big.Float, with no rounding.
func exact(v Num) *big.Float {
	if v.Kind == kindInt {
		return new(big.Float).SetInt64(v.I)
	}
	return big.NewFloat(v.F)
}
