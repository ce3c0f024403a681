package rank

import "math"

// mantissaBits is how many bits of a value's mantissa tell its cell
// apart: 7, so integers up to 255 are cells of their own, and a cell past
// them is 1/128 of a power of two.
const mantissaBits = 7

// trendStep is the width of a trend's cells, in its field's units (log2
// of the score): 1/64, about 1% of the score.
const trendStep = 1.0 / 64

// Grid says how a board's values are cut into cells: by their magnitude
// (Step 0), or into steps of Step.
type Grid struct {
	Step float64
}

// The cells of the values that are not finite, each of one value: NaN
// below every other (where Firestore's ordering puts it, and so last on a
// board), -Inf above it, +Inf above every finite value. No finite value's
// cell is one of them.
const (
	nanCell    int64 = math.MinInt64
	minusCell  int64 = math.MinInt64 + 1
	plusCell   int64 = math.MaxInt64
	finiteLow        = minusCell + 1 // the least cell of a finite value
	finiteHigh       = plusCell - 1  // the greatest
)

// Cell is the cell v falls in. Cells are ordered as the values in them.
func (g Grid) Cell(v float64) int64 {
	if v == 0 {
		v = 0 // -0 is 0: its sign bit is no place of its own
	}
	switch {
	case math.IsNaN(v):
		return nanCell
	case math.IsInf(v, -1):
		return minusCell
	case math.IsInf(v, 1):
		return plusCell
	case g.Step > 0:
		return clampCell(math.Floor(v / g.Step))
	case v < 0:
		return -magnitude(-v) - 1
	}
	return magnitude(v)
}

// clampCell is the cell numbered c, kept to finite values' cells.
func clampCell(c float64) int64 {
	switch {
	case c <= float64(finiteLow):
		return finiteLow
	case c >= float64(finiteHigh):
		return finiteHigh
	}
	return int64(c)
}

// CellOf is the cell of a stored value (an int64 or a float64): ok is
// false for anything else, which no board ranks. An integer is placed by
// its own value, not by the nearest float64 to it, which past 2^53 can be
// in the cell above.
func (g Grid) CellOf(v any) (int64, bool) {
	switch x := v.(type) {
	case int:
		return g.CellOf(int64(x))
	case int64:
		if g.Step > 0 {
			return g.Cell(float64(x)), true
		}
		if x < 0 {
			return -magnitude(towardZero(uint64(-(x+1))+1)) - 1, true
		}
		return magnitude(towardZero(uint64(x))), true
	case float64:
		return g.Cell(x), true
	}
	return 0, false
}

// towardZero is the greatest float64 at most u: a cell's bounds are
// float64s, so u is at or past one exactly when this is.
func towardZero(u uint64) float64 {
	f := float64(u)
	if f >= 1<<64 || uint64(f) > u {
		f = math.Nextafter(f, 0)
	}
	return f
}

// magnitude is the cell of v >= 0: the top bits of its float64 encoding,
// which order as the values do.
func magnitude(v float64) int64 {
	return int64(math.Float64bits(v) >> (52 - mantissaBits))
}

// Bounds are the least and greatest values of cell c, and whether each is
// in it: a cell is [lo, hi) of non-negative values, (lo, hi] of negative.
func (g Grid) Bounds(c int64) (lo, hi float64, loIn, hiIn bool) {
	switch c {
	case nanCell:
		return math.NaN(), math.NaN(), true, true
	case minusCell:
		return math.Inf(-1), math.Inf(-1), true, true
	case plusCell:
		return math.Inf(1), math.Inf(1), true, true
	}
	if g.Step > 0 {
		return float64(c) * g.Step, float64(c+1) * g.Step, true, false
	}
	if c < 0 {
		m := -c - 1
		return -bound(m + 1), -bound(m), false, true
	}
	return bound(c), bound(c + 1), true, false
}

// bound is the least value of magnitude m: past the greatest finite
// value's, +Inf, which that cell does not hold.
func bound(m int64) float64 {
	if m >= magnitude(math.Inf(1)) {
		return math.Inf(1)
	}
	return math.Float64frombits(uint64(m) << (52 - mantissaBits))
}

// Single reports whether cell c holds one value of those a board of
// integers takes, so that no document of it is above another.
func (g Grid) Single(c int64, integers bool) bool {
	if c == nanCell || c == minusCell || c == plusCell {
		return true
	}
	if !integers || g.Step > 0 {
		return false
	}
	lo, hi, loIn, hiIn := g.Bounds(c)
	least, most := math.Floor(lo)+1, math.Ceil(hi)-1 // the integers in it
	if loIn {
		least = math.Ceil(lo)
	}
	if hiIn {
		most = math.Floor(hi)
	}
	return most-least < 1
}

// Value reads a field's stored value as a number: ok is false for
// anything else (absent, a string), which no board ranks. NaN and the
// infinities are ranked, each in a cell of its own (see Cell).
func Value(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}
