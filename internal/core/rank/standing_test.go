package rank

import (
	"math"
	"math/rand/v2"
	"testing"

	"cloud.google.com/go/firestore"
)

// A value's standing, from the summary alone, holds its true place: one
// place where its cell holds one value, otherwise a span that holds it,
// no wider than the documents in its cell; and a board of integers up to
// 255 is exact everywhere.
func TestStandingHoldsTheTruePlace(t *testing.T) {
	for _, tc := range []struct {
		name     string
		integers bool
		most     float64
	}{{"small integers", true, 255}, {"large integers", true, 1e6}, {"fractions", false, 1e3}} {
		t.Run(tc.name, func(t *testing.T) {
			b := NewBoard("posts", "likes", firestore.FieldPath{"_tally"}, false, tc.integers)
			r := rand.New(rand.NewPCG(1, 2))
			values := make([]float64, 5000)
			s := Summary{Cells: map[int64]int64{}, Of: int64(len(values))}
			for i := range values {
				values[i] = r.Float64() * tc.most
				if tc.integers {
					values[i] = float64(int64(values[i]))
				}
				s.Cells[b.Grid.Cell(values[i])]++
			}
			exact := 0
			for _, v := range values[:500] {
				truth := int64(1)
				for _, w := range values {
					if w > v {
						truth++
					}
				}
				st := s.StandingOf(b, v)
				if truth < st.Best || truth > st.Worst || st.Worst-st.Best > s.Cells[b.Grid.Cell(v)] {
					t.Fatalf("%v: standing %+v, true place %d", v, st, truth)
				}
				if st.Exact() {
					exact++
					if st.Best != truth {
						t.Fatalf("%v: exact standing %d, true place %d", v, st.Best, truth)
					}
				}
				if top := 100 * float64(st.Worst) / float64(s.Of); st.Top() != top {
					t.Fatalf("%v: top %v%%, want %v%%", v, st.Top(), top)
				}
			}
			if tc.most <= 255 && exact != 500 {
				t.Errorf("%d of 500 standings exact on a board of integers up to 255, want all", exact)
			}
			t.Logf("%d of 500 standings exact", exact)
		})
	}
}

// A value below every document's stands last, with the last (never past
// Of); -0 stands where 0 does, in the same cell.
func TestStandingAtTheEdges(t *testing.T) {
	b := NewBoard("posts", "likes", firestore.FieldPath{"_tally"}, false, true)
	s := Summary{Cells: map[int64]int64{}, Of: 5}
	for _, v := range []float64{9, 7, 5, 3, 3} {
		s.Cells[b.Grid.Cell(v)]++
	}
	for v, want := range map[float64]int64{10: 1, 3: 4, 0: 5, -4: 5, math.Inf(-1): 5, math.Copysign(0, -1): 5} {
		if st := s.StandingOf(b, v); st.Best != want || st.Worst != want || st.Of != 5 {
			t.Errorf("standing of %v: #%d to #%d of %d; want #%d of 5", v, st.Best, st.Worst, st.Of, want)
		}
	}
	if b.Grid.Cell(math.Copysign(0, -1)) != b.Grid.Cell(0) {
		t.Error("-0 and 0 are in different cells")
	}
}
