package core

import (
	"math"
	"time"

	"cloud.google.com/go/firestore"
	"github.com/tallycounters/tally/internal/core/aggregate"
	"github.com/tallycounters/tally/internal/core/bytime"
	"github.com/tallycounters/tally/internal/core/calendar"
)

// What a field of a counted document is to tally, as Kept says.
const (
	KeptCount     = "count"
	KeptAggregate = "aggregate"
	KeptWindow    = "window" // per or over
	KeptTrend     = "trend"
)

// Kept says what field of the counter name is, of what tally keeps: a
// count (in the guide layout, "" or total), an aggregate, a per or over
// window, or a trend; "" if tally keeps no such field.
func (l Layout) Kept(name, field string) string {
	if _, err := l.Check(name, field); err == nil {
		return KeptCount
	}
	if l.IsAggregate(name, field) {
		return KeptAggregate
	}
	for _, w := range l.WindowsOf(name) {
		if w.Field == field {
			if w.Kind == bytime.KindTrend {
				return KeptTrend
			}
			return KeptWindow
		}
	}
	return ""
}

// KeptFields are the fields tally keeps on the counter name: its counts,
// its aggregates, then its windows and trends, as declared.
func (l Layout) KeptFields(name string) []string {
	var out []string
	for _, c := range l.Counts(name) {
		out = append(out, c.Field)
	}
	for _, a := range l.Aggregates(name) {
		out = append(out, a.Field)
	}
	for _, w := range l.WindowsOf(name) {
		out = append(out, w.Field)
	}
	return out
}

// BeforeFold is what field of the counter name reads before its first fold
// writes it: 0 for a count, a window, or a count or sum of children; 0.0
// for a trend; nil for an average, a greatest or a least, which are over
// no children yet, and for a field tally does not keep.
func (l Layout) BeforeFold(name, field string) any {
	switch l.Kept(name, field) {
	case KeptCount, KeptWindow:
		return int64(0)
	case KeptTrend:
		return 0.0
	case KeptAggregate:
		for _, a := range l.Aggregates(name) {
			if a.Field == field && (a.Op == aggregate.OpCount || a.Op == aggregate.OpSum) {
				return int64(0)
			}
		}
	}
	return nil
}

// SmallestUnit is the shortest unit of the windows declared, "" if none:
// the boundary job runs at each start of its buckets.
func (l Layout) SmallestUnit() calendar.Unit {
	order := []calendar.Unit{calendar.Minute, calendar.Hour, calendar.Day, calendar.Week, calendar.Month}
	best := -1
	consider := func(ws []bytime.Window) {
		for _, w := range ws {
			for i, u := range order {
				if w.Kind != bytime.KindTrend && u == w.Unit && (best < 0 || i < best) {
					best = i
				}
			}
		}
	}
	consider(l.Windows)
	for _, d := range l.Docs {
		consider(d.Windows)
	}
	if best < 0 {
		return ""
	}
	return order[best]
}

// SmallestUnitOf is the shortest unit of the per and over windows of the
// counted document name, "" if it has none: the boundary job moves its
// windows at each start of its buckets.
func (l Layout) SmallestUnitOf(name string) calendar.Unit {
	if l.OnDocs() {
		d, err := l.match(name)
		if err != nil {
			return ""
		}
		l = Layout{Docs: []Declaration{d}}
	}
	return l.SmallestUnit()
}

// TrendUpdates are the writes that add to each trend of ws, stored as in
// trends, what delta gives it, weighed at at; each trend's next value
// goes in next.
func (l Layout) TrendUpdates(ws []bytime.Window, trends, next map[string]float64, at time.Time, delta func(bytime.Window) float64) []firestore.Update {
	var updates []firestore.Update
	for _, w := range ws {
		if w.Kind != bytime.KindTrend {
			continue
		}
		S, ok := trends[w.Field]
		if !ok {
			S = math.Inf(-1)
		}
		after := bytime.TrendAdd(S, delta(w), at, w.HalfLife)
		next[w.Field] = after
		if ok && after == S {
			continue
		}
		updates = append(updates,
			firestore.Update{FieldPath: firestore.FieldPath{w.Field}, Value: after},
			firestore.Update{FieldPath: append(l.FieldPath(FieldTrends), w.Field), Value: map[string]any{
				"h": w.HalfLife.Seconds(), "l": bytime.Landmark}})
	}
	return updates
}
