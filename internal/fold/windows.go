package fold

import (
	"context"
	"fmt"
	"slices"
	"time"

	"cloud.google.com/go/firestore"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/core/bytime"
)

// How a fold moves a document's windows is package bytime's (Fold); what
// is core's is the reading of the counts at the starts of buckets that
// bytime says a fold needs, at past read times, and the writing of what
// it moved.

// WindowFold is what the fold s onto p knows of the windows of the
// document name, for package bytime to move them.
func WindowFold(l core.Layout, name string, p core.Parent, s Sum) bytime.Fold {
	counts := l.Counts(name)
	fields := make([]string, len(counts))
	for i, c := range counts {
		fields[i] = c.Field
	}
	return bytime.Fold{Windows: l.WindowsOf(name), Counts: fields, Zone: l.Zone,
		States: p.Windows, Totals: p.Totals, NextBoundary: p.NextBoundary, Born: p.Born,
		At: s.windowAt(), Values: core.WithOwn(s.Values, p.Own), Boundaries: s.Boundaries, Quiet: s.Quiet}
}

// ReadBoundaries reads, into s, the counts of the document name (as p
// knew it) at each start of a bucket of its windows that the fold s
// crossed since the document was last folded, if the document was folded
// in the bucket before (p.NextBoundary), within bytime.BoundaryLag of now and
// Firestore's retention: one aggregation per windowed count each. Then,
// if the counts changed since the last fold and a start the fold crosses
// is still unread, it reads the latest such start (or, past the
// retention, the earliest instant it can read): counts equal to the last
// fold's there mean no increment came between, so every start before it
// held them (s.Quiet); else it reads each start it crosses within the
// retention, so that only a start it cannot read is left to a guess, and
// reported (Outcome.Unread).
func (f *Folder) ReadBoundaries(ctx context.Context, name string, p core.Parent, s *Sum, now time.Time) error {
	return ReadBoundaries(ctx, f.layout, name, p, s, now, func(ctx context.Context, at time.Time, w bytime.Fold) ([]int64, error) {
		vals, err := f.shardsAt(ctx, name, p, at, w)
		if err != nil || !slices.ContainsFunc(p.Own, func(v int64) bool { return v != 0 }) {
			return vals, err
		}
		own, err := f.ownAt(ctx, name, at) // the document holds a part of its counts itself
		for i := range vals {
			if w.Windowed(i) && i < len(own) {
				vals[i] += own[i]
			}
		}
		return vals, err
	})
}

// shardsAt is the sum of each count of name's shards that a window of w
// needs at the past read time at, 0 for the others.
func (f *Folder) shardsAt(ctx context.Context, name string, p core.Parent, at time.Time, w bytime.Fold) ([]int64, error) {
	if s, ok, err := f.wholeAt(ctx, name, p, at); err != nil || ok { // on one shard then: shard 0, read by key
		for i := range s.Values {
			if !w.Windowed(i) {
				s.Values[i] = 0
			}
		}
		return s.Values, err
	}
	return f.countsAt(ctx, name, p.Life, at, w)
}

// ownAt is the own part of each count of the document name at the past
// read time at: what it held of its counts itself then (none if it did
// not exist).
func (f *Folder) ownAt(ctx context.Context, name string, at time.Time) ([]int64, error) {
	var own []int64
	err := f.client.RunTransaction(ctx, func(ctx context.Context, tx *firestore.Transaction) error {
		snap, err := tx.Get(f.layout.Counter(f.client, name))
		if status.Code(err) == codes.NotFound {
			return nil
		}
		if err != nil {
			return err
		}
		own = f.layout.OwnValues(snap.Data(), f.layout.Counts(name))
		return nil
	}, firestore.ReadOnly, firestore.TransactionReadTime(core.Precise(at)))
	if err != nil {
		return nil, fmt.Errorf("fold: %s's own part at %s: %w", name, at.Format(time.RFC3339Nano), err)
	}
	return own, nil
}

// CountsAt reads a document's counts at the past read time at: those a
// window of w needs (w.Windowed), 0 for the others.
type CountsAt func(ctx context.Context, at time.Time, w bytime.Fold) ([]int64, error)

// ReadBoundaries is Folder.ReadBoundaries on any store: countsAt reads
// the document's counts at a past instant.
func ReadBoundaries(ctx context.Context, l core.Layout, name string, p core.Parent, s *Sum, now time.Time, countsAt CountsAt) error {
	if !p.Exists || s.Values == nil {
		return nil
	}
	w := WindowFold(l, name, p, *s)
	if err := readStarts(ctx, &w, s, w.Due(now), countsAt); err != nil {
		return err
	}
	return probe(ctx, &w, p, s, now, countsAt)
}

// readStarts reads the counts at each of starts that w holds no read of,
// into s, and w with it.
func readStarts(ctx context.Context, w *bytime.Fold, s *Sum, starts []time.Time, countsAt CountsAt) error {
	for _, b := range starts {
		if w.Read(b) {
			continue
		}
		vals, err := countsAt(ctx, b.Add(-time.Microsecond), *w)
		if err != nil {
			return err
		}
		s.Boundaries = append(s.Boundaries, bytime.Boundary{At: b, Values: vals})
		w.Boundaries = s.Boundaries
	}
	return nil
}

// probe reads, for the fold s onto p, whether the counts changed between
// the last fold and the starts it crosses unread (see ReadBoundaries).
func probe(ctx context.Context, w *bytime.Fold, p core.Parent, s *Sum, now time.Time, countsAt CountsAt) error {
	if w.SameWindowed(core.WithOwn(s.Values, p.Own), p.Totals) {
		return nil
	}
	unread := w.CrossedUnread()
	if len(unread) == 0 {
		return nil
	}
	latest := unread[0]
	at := latest
	if earliest := now.Add(-bytime.Readable); at.Before(earliest) {
		at = earliest // the latest start is past the retention: as close to it as can be read
	}
	vals, err := countsAt(ctx, at.Add(-time.Microsecond), *w)
	if err != nil {
		return err
	}
	if w.SameWindowed(vals, p.Totals) {
		s.Quiet = at // no increment between the last fold and at
		return nil
	}
	var starts []time.Time
	for _, b := range unread {
		if now.Sub(b) <= bytime.Readable && len(starts) < bytime.MaxBoundaryReads {
			starts = append(starts, b)
		}
	}
	if at.Equal(latest) {
		s.Boundaries = append(s.Boundaries, bytime.Boundary{At: latest, Values: vals})
		w.Boundaries = s.Boundaries
	}
	return readStarts(ctx, w, s, starts, countsAt)
}

// moved is what a fold wrote of a document's windows and trends, for the
// view of it after the write.
type moved struct {
	ok      bool
	windows map[string]bytime.State
	trends  map[string]float64
	next    time.Time
	unread  []time.Time // bucket starts whose counts no one read (see Outcome.Unread)
}

// apply sets m on p.
func (m moved) apply(p *core.Parent) {
	if m.ok {
		p.Windows, p.Trends, p.NextBoundary = m.windows, m.trends, m.next
	}
}

// timeUpdates are what a fold s onto p writes of the document name's
// windows and trends (counts says whether it writes the counts,
// aggregates the aggregates' new values, nil if none): each window's
// value and state, each trend's field, and next_boundary. None if the
// document has no window, or the fold writes neither counts nor
// aggregates.
func (f *Folder) timeUpdates(name string, p core.Parent, s Sum, counts bool, aggregates map[string]any) ([]firestore.Update, moved) {
	ws := f.layout.WindowsOf(name)
	if len(ws) == 0 || !counts && aggregates == nil {
		return nil, moved{}
	}
	m := moved{ok: true, windows: p.Windows, trends: map[string]float64{}, next: p.NextBoundary}
	var updates []firestore.Update
	fold := WindowFold(f.layout, name, p, s)
	totals := p.Totals
	if counts {
		totals = f.totals(name, p, s)
		var values map[string]int64
		values, m.windows, m.next, m.unread = fold.Move(totals)
		for field, v := range values {
			updates = append(updates,
				firestore.Update{FieldPath: firestore.FieldPath{field}, Value: v},
				firestore.Update{FieldPath: append(f.layout.FieldPath(core.FieldWindows), field), Value: m.windows[field].Stored(windowNamed(ws, field), f.layout.Zone)})
		}
		var next any = firestore.Delete
		if !m.next.IsZero() {
			next = m.next
		}
		updates = append(updates, firestore.Update{FieldPath: f.layout.FieldPath(core.FieldNextBoundary), Value: next})
	}
	at := s.At
	if !s.Weigh.IsZero() && s.Weigh.Before(at) && s.Weigh.After(p.AsOf) {
		at = s.Weigh
	}
	trends := f.layout.TrendUpdates(ws, p.Trends, m.trends, at, func(w bytime.Window) float64 {
		return fold.TrendDelta(w, totals, p.Aggregates, aggregates)
	})
	return append(updates, trends...), m
}

// TrendsAdded are the writes that add added, each count's amount, to the
// trends of the counted document name as p holds them, weighed at at:
// for counts written into the document with no fold (package
// extension's moves), whose next fold then finds them in the document's
// counts already, and so adds none of them to its trends.
func TrendsAdded(l core.Layout, name string, p core.Parent, added map[string]int64, at time.Time) []firestore.Update {
	return l.TrendUpdates(l.WindowsOf(name), p.Trends, map[string]float64{}, at, func(w bytime.Window) float64 {
		var d float64
		for _, t := range w.Terms {
			d += t.Weight * float64(added[t.Field])
		}
		return d
	})
}

// windowNamed is the window of ws whose field is field.
func windowNamed(ws []bytime.Window, field string) bytime.Window {
	for _, w := range ws {
		if w.Field == field {
			return w
		}
	}
	return bytime.Window{}
}

// setPaths sets each update's value at its field path in data, as a
// document created with data would hold it.
func setPaths(data map[string]any, updates []firestore.Update) {
	for _, u := range updates {
		if u.Value != firestore.Delete {
			core.SetAt(data, u.FieldPath, u.Value)
		}
	}
}
