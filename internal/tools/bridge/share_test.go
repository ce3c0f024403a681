package bridge

import (
	"math"
	"testing"
)

// TestShareIsEven: of any n calls in a row, a share of rate picks at
// least ⌊n·rate⌋ and at most ⌈n·rate⌉, from whatever start; rate 0 picks
// none and rate 1 every one.
func TestShareIsEven(t *testing.T) {
	for _, rate := range []float64{0, 0.1, 0.2, 1.0 / 3, 0.5, 0.9, 1} {
		s := newShare(rate)
		picks := make([]bool, 500)
		for i := range picks {
			picks[i] = s.next()
		}
		for n := 1; n <= 60; n++ {
			for from := 0; from+n <= len(picks); from++ {
				got := 0
				for _, p := range picks[from : from+n] {
					if p {
						got++
					}
				}
				lo, hi := math.Floor(float64(n)*rate+1e-9), math.Ceil(float64(n)*rate-1e-9)
				if float64(got) < lo || float64(got) > hi {
					t.Fatalf("rate %g: %d of %d calls from %d picked; want %g to %g", rate, got, n, from, lo, hi)
				}
			}
		}
	}
}
