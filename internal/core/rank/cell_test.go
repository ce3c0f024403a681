package rank

import (
	"math"
	"math/big"
	"testing"
)

func TestCellsOrderAsTheirValues(t *testing.T) {
	for _, g := range []Grid{{}, {Step: trendStep}} {
		values := []float64{-1e9, -300.5, -256, -255, -2, -1, -0.5, 0, 0.25, 1, 2, 3, 127, 255, 256, 257, 258, 1000, 16000.01, 1e6, 1e12}
		for i := 1; i < len(values); i++ {
			a, b := g.Cell(values[i-1]), g.Cell(values[i])
			if a > b {
				t.Errorf("grid %v: cell(%v) = %d > cell(%v) = %d", g, values[i-1], a, values[i], b)
			}
		}
		for _, v := range values {
			lo, hi, loIn, hiIn := g.Bounds(g.Cell(v))
			in := (v > lo || loIn && v == lo) && (v < hi || hiIn && v == hi)
			if !in {
				t.Errorf("grid %v: %v is not within its cell's bounds [%v %v] (%v %v)", g, v, lo, hi, loIn, hiIn)
			}
		}
	}
}

func TestIntegersUpTo255AreCellsOfTheirOwn(t *testing.T) {
	var g Grid
	for v := -255.0; v <= 255; v++ {
		if !g.Single(g.Cell(v), true) {
			t.Fatalf("cell of %v holds more than one integer", v)
		}
		if g.Cell(v) == g.Cell(v+1) {
			t.Fatalf("%v and %v share a cell", v, v+1)
		}
	}
	if g.Single(g.Cell(256), true) || g.Single(g.Cell(5), false) {
		t.Error("a cell of several integers, or of any float, is taken as one value")
	}
	// a count crosses about 2,000 cells from 1 to a million
	if n := g.Cell(1e6) - g.Cell(1); n > 3000 {
		t.Errorf("0 to 1e6 crosses %d cells from 1", n)
	}
}

// TestCellsOfEveryValue: NaN, the infinities and the greatest finite
// values each have a cell, in the order Firestore gives the values (NaN
// least), with bounds that are numbers; and an int64 past 2^53 falls in
// the cell whose bounds hold it exactly, not the float64 nearest it.
func TestCellsOfEveryValue(t *testing.T) {
	for _, g := range []Grid{{}, {Step: trendStep}} {
		values := []float64{math.NaN(), math.Inf(-1), -math.MaxFloat64, -1e300, -1, 0, 1, 1e300, math.MaxFloat64, math.Inf(1)}
		for i := 1; i < len(values); i++ {
			// a step's cells of the greatest finite values are one
			strict := i <= 2 || i == len(values)-1 || g.Step == 0
			if a, b := g.Cell(values[i-1]), g.Cell(values[i]); a > b || strict && a == b {
				t.Errorf("grid %v: cell(%v) = %d, not below cell(%v) = %d", g, values[i-1], a, values[i], b)
			}
		}
		for _, v := range values {
			c := g.Cell(v)
			lo, hi, _, _ := g.Bounds(c)
			if !math.IsNaN(v) && (math.IsNaN(lo) || math.IsNaN(hi)) {
				t.Errorf("grid %v: the cell of %v has bounds %v, %v", g, v, lo, hi)
			}
			if math.IsNaN(v) || math.IsInf(v, 0) {
				if !g.Single(c, false) {
					t.Errorf("grid %v: the cell of %v holds more than it", g, v)
				}
			}
		}
	}
	var g Grid
	for _, x := range []int64{1<<53 - 1, 1 << 53, 1<<53 + 1, 1<<62 - 1, 1 << 62, 1<<62 + 1, math.MaxInt64, -1 << 62, -1<<62 - 1, math.MinInt64, math.MinInt64 + 1} {
		c, ok := g.CellOf(x)
		if !ok {
			t.Fatalf("%d has no cell", x)
		}
		lo, hi, loIn, hiIn := g.Bounds(c)
		exact, l, h := new(big.Float).SetInt64(x), big.NewFloat(lo), big.NewFloat(hi)
		above, below := exact.Cmp(l), exact.Cmp(h)
		if !(above > 0 || loIn && above == 0) || !(below < 0 || hiIn && below == 0) {
			t.Errorf("%d is in cell %d, whose bounds are %v, %v (%v %v)", x, c, lo, hi, loIn, hiIn)
		}
	}
	if a, _ := g.CellOf(int64(1<<62 - 1)); a == g.Cell(1<<62) {
		t.Error("2^62-1 shares a cell with 2^62, as its nearest float64 does")
	}
}
