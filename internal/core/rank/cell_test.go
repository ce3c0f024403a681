package rank

import (
	"math"
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
	if _, ok := Value(math.NaN()); ok {
		t.Error("NaN is ranked")
	}
}
