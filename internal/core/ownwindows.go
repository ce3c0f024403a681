package core

import (
	"maps"
	"slices"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/internal/core/bytime"
)

// The windows and trends of a count written into its document itself
// (own.go): the write moves them as a fold would.

// OwnTimeUpdates are what an increment by of count c, written into the
// counted document name itself at at, writes of its windows and trends,
// the document being as p holds it: by added to each per and over window
// of c, and each trend that weighs c moved as a fold at at would move it
// (TrendUpdates); and next_boundary brought to the end of the windows'
// buckets if it was later or unset, so that the boundary job moves them
// on (a fold sets it only where a window changes at the end). after is
// the document's windows and trends after, as p holds them. ok is false,
// for a shard, where a window of c is not in the bucket of at (no fold
// has moved it there), or at is within margin of its end: the fold that
// moves it on reads the count at the bucket's start, which only a fold
// knows to read.
func (l Layout) OwnTimeUpdates(name string, p Parent, c Count, by int64, at time.Time, margin time.Duration) (updates []firestore.Update, after Parent, ok bool) {
	ws := l.WindowsOf(name)
	after = Parent{Windows: p.Windows, Trends: p.Trends, NextBoundary: p.NextBoundary}
	if len(ws) == 0 {
		return nil, after, true
	}
	var end time.Time
	for _, w := range ws {
		if w.Kind == bytime.KindTrend || w.Count != c.Field {
			continue
		}
		st, kept := p.Windows[w.Field]
		next := w.Unit.Next(st.Bucket, l.Zone)
		if !kept || !st.Bucket.Equal(w.Unit.Start(at, l.Zone)) || !at.Add(margin).Before(next) {
			return nil, Parent{}, false
		}
		updates = append(updates, firestore.Update{FieldPath: firestore.FieldPath{w.Field}, Value: firestore.Increment(by)})
		if end.IsZero() || next.Before(end) {
			end = next
		}
	}
	if !end.IsZero() && (p.NextBoundary.IsZero() || end.Before(p.NextBoundary)) {
		updates = append(updates, firestore.Update{FieldPath: l.FieldPath(FieldNextBoundary), Value: end})
		after.NextBoundary = end
	}
	weighing := slices.DeleteFunc(slices.Clone(ws), func(w bytime.Window) bool {
		return w.Kind != bytime.KindTrend || !slices.ContainsFunc(w.Terms, func(t bytime.Term) bool { return t.Field == c.Field })
	})
	after.Trends = maps.Clone(p.Trends)
	if after.Trends == nil {
		after.Trends = map[string]float64{}
	}
	updates = append(updates, l.TrendUpdates(weighing, p.Trends, after.Trends, at, func(w bytime.Window) float64 {
		var d float64
		for _, t := range w.Terms {
			if t.Field == c.Field {
				d += t.Weight * float64(by)
			}
		}
		return d
	})...)
	return updates, after, true
}
