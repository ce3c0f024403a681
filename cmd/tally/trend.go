package main

import (
	"fmt"
	"math"
	"strings"
	"time"

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
			return fmt.Sprintf("%.3g (%s, halving every %s)", score, terms(w.Terms), halfLife(w.HalfLife))
		}
	}
	return fmt.Sprint(v)
}

// terms is a trend's weighted sum as declared: likes + views/10 + 2*shares.
func terms(ts []bytime.Term) string {
	var parts []string
	for _, t := range ts {
		switch inv := 1 / t.Weight; {
		case t.Weight == 1:
			parts = append(parts, t.Field)
		case t.Weight < 1 && inv == math.Round(inv):
			parts = append(parts, fmt.Sprintf("%s/%g", t.Field, inv))
		default:
			parts = append(parts, fmt.Sprintf("%g*%s", t.Weight, t.Field))
		}
	}
	return strings.Join(parts, " + ")
}

// halfLife is d as a declaration writes it: 6h, 90m, 2d, 1w.
func halfLife(d time.Duration) string {
	for _, u := range []struct {
		name string
		d    time.Duration
	}{{"w", 7 * 24 * time.Hour}, {"d", 24 * time.Hour}, {"h", time.Hour}, {"m", time.Minute}} {
		if d%u.d == 0 {
			return fmt.Sprintf("%d%s", d/u.d, u.name)
		}
	}
	return d.String()
}
