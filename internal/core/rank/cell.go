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

// Cell is the cell v falls in. Cells are ordered as the values in them.
func (g Grid) Cell(v float64) int64 {
	if g.Step > 0 {
		return int64(math.Floor(v / g.Step))
	}
	if v < 0 {
		return -magnitude(-v) - 1
	}
	return magnitude(v)
}

// magnitude is the cell of v >= 0: the top bits of its float64 encoding,
// which order as the values do.
func magnitude(v float64) int64 {
	return int64(math.Float64bits(v) >> (52 - mantissaBits))
}

// Bounds are the least and greatest values of cell c, and whether each is
// in it: a cell is [lo, hi) of non-negative values, (lo, hi] of negative.
func (g Grid) Bounds(c int64) (lo, hi float64, loIn, hiIn bool) {
	if g.Step > 0 {
		return float64(c) * g.Step, float64(c+1) * g.Step, true, false
	}
	if c < 0 {
		m := -c - 1
		return -bound(m + 1), -bound(m), false, true
	}
	return bound(c), bound(c + 1), true, false
}

func bound(m int64) float64 { return math.Float64frombits(uint64(m) << (52 - mantissaBits)) }

// Single reports whether cell c holds one value of those a board of
// integers takes, so that no document of it is above another.
func (g Grid) Single(c int64, integers bool) bool {
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
// anything else (absent, a string, NaN), which no board ranks.
func Value(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, !math.IsNaN(x)
	}
	return 0, false
}
