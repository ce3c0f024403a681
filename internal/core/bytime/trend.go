package bytime

import (
	"math"
	"time"
)

// A trend is a score by forward decay: each unit counted at time t weighs
// 2^((t - Landmark)/h), for its half-life h, so that at any instant now its
// weight there is 2^(-(now - t)/h). A document keeps, in the trend's
// field, S = log2 of the sum V of its units' weights: its score at now is
// 2^(S - (now - Landmark)/h). Every document's score is S less the same
// amount, so a query ordered by the field orders by the score at any
// moment, and a document that gets nothing is never written. A fold adds
// its change of the trend's counts at its read time, in log space, so S
// neither overflows nor needs renormalising: a unit is weighed at its
// fold's read time instead of its commit's, at most a window later, which
// errs by a factor of at most 2^(window/h) (3.2e-5 for a second against
// 6 hours). A take-back subtracts; a score that reaches 0 or less is
// -Infinity, which orders last.

// Landmark is the instant trends are weighed from.
var Landmark = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// TrendAdd is S after d units (negative: taken back) at t, for half-life h.
func TrendAdd(S, d float64, t time.Time, h time.Duration) float64 {
	if d == 0 || math.IsNaN(d) {
		return S
	}
	term := t.Sub(Landmark).Seconds()/h.Seconds() + math.Log2(math.Abs(d))
	switch {
	case d > 0 && math.IsInf(S, -1):
		return term
	case d > 0:
		hi, lo := math.Max(S, term), math.Min(S, term)
		return hi + math.Log2(1+math.Exp2(lo-hi))
	case math.IsInf(S, -1) || term >= S:
		return math.Inf(-1) // as much taken back as was there, or more
	}
	return S + math.Log2(1-math.Exp2(term-S))
}

// TrendNow is the score at now of a trend whose field holds S, for
// half-life h.
func TrendNow(S float64, now time.Time, h time.Duration) float64 {
	if math.IsInf(S, -1) {
		return 0
	}
	return math.Exp2(S - now.Sub(Landmark).Seconds()/h.Seconds())
}
