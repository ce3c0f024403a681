package main

import (
	"fmt"

	"github.com/tallycounters/tally/internal/core/bytime"
)

// shown is field's value v of document id as a person reads it: a trend's
// score now with three digits and what it weighs ("12.3 (likes +
// views/10, halving every 6h)"), as the web client's trendNow gives it;
// any other value as it is.
func (a *admin) shown(id, field string, v any) string {
	score, ok := v.(float64)
	if !ok {
		return fmt.Sprint(v)
	}
	for _, w := range layoutOf(a.cfg).WindowsOf(id) {
		if w.Field == field && w.Kind == bytime.KindTrend {
			return fmt.Sprintf("%.3g (%s, halving every %s)", score, w.Weighs(), w.HalvesEvery())
		}
	}
	return fmt.Sprint(v)
}
