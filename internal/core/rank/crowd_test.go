package rank

import "testing"

// A crowd finds the part of a value, the documents in the parts above
// it, and in it, at and between its bounds.
func TestCrowdParts(t *testing.T) {
	c := Crowd{Bounds: []float64{300, 200, 100}, Above: []int64{900, 1700, 2600}} // a cell of 3,000
	for _, tc := range []struct {
		v         float64
		above, in int64
		top       float64
		inTop     bool
	}{
		{350, 0, 900, 0, true}, {300, 0, 900, 0, true},
		{299, 900, 800, 300, false}, {200, 900, 800, 300, false},
		{150, 1700, 900, 200, false}, {100, 1700, 900, 200, false},
		{99, 2600, 400, 100, false}, {0, 2600, 400, 100, false},
	} {
		above, in := c.counts(tc.v, 3000)
		a, top, ok := c.part(tc.v)
		if above != tc.above || in != tc.in || a != tc.above || ok == tc.inTop || ok && top != tc.top {
			t.Errorf("%v: %d above, %d in, top %v (%v); want %d, %d, %v", tc.v, above, in, top, ok, tc.above, tc.in, tc.top)
		}
	}
	if above, in := (Crowd{}).counts(5, 1200); above != 0 || in != 1200 {
		t.Errorf("no crowd: %d above, %d in; want 0, 1200", above, in)
	}
}
