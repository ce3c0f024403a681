package core

import (
	"math"

	"github.com/tallycounters/tally/internal/core/bytime"
)

// trendDelta is the change of a trend's weighted counts from p, as it was,
// to the fold: totals are the counts after it, aggregates its aggregates'
// values (nil if it refolded none).
func (l Layout) trendDelta(name string, w bytime.Window, p Parent, totals []int64, aggregates map[string]any) float64 {
	counts := l.Counts(name)
	var d float64
	for _, t := range w.Terms {
		for i, c := range counts {
			if c.Field == t.Field && i < len(totals) {
				var before int64
				if i < len(p.Totals) {
					before = p.Totals[i]
				}
				d += t.Weight * float64(totals[i]-before)
			}
		}
		if after, ok := aggregates[t.Field]; ok {
			d += t.Weight * (number(after) - number(p.Aggregates[t.Field]))
		}
	}
	return d
}

// number is an aggregate's value as a float64: 0 for none.
func number(v any) float64 {
	switch x := v.(type) {
	case int64:
		return float64(x)
	case float64:
		if math.IsNaN(x) {
			return 0
		}
		return x
	}
	return 0
}
