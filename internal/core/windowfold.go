package core

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/internal/core/bytime"
	"github.com/tallycounters/tally/internal/core/calendar"
)

// How a fold moves a document's windows (windowstate.go, and package
// bytime's State.Roll). A fold at read time R writes each count's value at
// R; a window of it is that value less the count at the start of the
// window's first bucket. The count at a bucket's start B is read at B less
// a microsecond, after the fact (a read at a past read time), by the first
// fold after B of a document that was folded in the bucket before B (its
// next_boundary says so): usually the boundary job's, within seconds of B
// (sweep.go). A document that no fold touched in a bucket had no increment
// in it, and its count at the bucket's end is the count at its last fold:
// idle documents cost nothing.

// BoundaryLag is how far back a fold reads a bucket's start that it
// crossed: an increment whose event reaches Rollup later than this after
// the end of its bucket, for a document that neither the boundary job nor
// a fold read at that end, is counted in the bucket its fold finds.
const BoundaryLag = 5 * time.Minute

// DefaultRetention is how far back Firestore reads at a past read time:
// an hour (seven days with point-in-time recovery).
const DefaultRetention = time.Hour

// NewWindowLag is how far back a fold reads the start of the current
// bucket of a window new to the document (declared since its last fold,
// or its first fold): within it, the first bucket is exact; past it (a
// day's bucket, hours after midnight), past what Firestore keeps, the
// first bucket counts from the fold. A document created in the bucket
// needs no read: nothing of its life was counted before.
const NewWindowLag = DefaultRetention - 5*time.Minute

// maxBoundaryReads bounds the bucket starts one fold reads.
const maxBoundaryReads = 10

// Boundary is the counts of a document just before the start of a bucket,
// read at that time.
type Boundary struct {
	At     time.Time // the bucket's start; the counts are as of a microsecond before
	Values []int64   // each count's, in Counts order
}

// windowed reports whether any window of the counter name needs count i.
func (l Layout) windowed(name string, i int) bool {
	counts := l.Counts(name)
	for _, w := range l.WindowsOf(name) {
		if w.Kind != bytime.KindTrend && i < len(counts) && counts[i].Field == w.Count {
			return true
		}
	}
	return false
}

// ReadBoundaries reads, into s, the counts of the document name (as p
// knew it) at each start of a bucket of its windows that the fold s
// crossed since the document was last folded, if the document was folded
// in the bucket before (p.NextBoundary), within BoundaryLag of now and
// Firestore's retention: one aggregation per windowed count each. Then,
// if the counts changed since the last fold and a start the fold crosses
// is still unread, it reads the latest such start (or, past the
// retention, the earliest instant it can read): counts equal to the last
// fold's there mean no increment came between, so every start before it
// held them (s.Quiet); else it reads each start it crosses within the
// retention, so that only a start it cannot read is left to a guess, and
// reported (Outcome.Unread).
func (f *Folder) ReadBoundaries(ctx context.Context, name string, p Parent, s *Sum, now time.Time) error {
	if !p.Exists || s.Values == nil {
		return nil
	}
	if err := f.readStarts(ctx, name, p, s, f.dueStarts(name, p, *s, now)); err != nil {
		return err
	}
	return f.probe(ctx, name, p, s, now)
}

// dueStarts are the starts ReadBoundaries reads first: the current
// bucket's start of a window new to the document, and each start crossed
// since p.NextBoundary within BoundaryLag.
func (f *Folder) dueStarts(name string, p Parent, s Sum, now time.Time) []time.Time {
	at := s.windowAt()
	var starts []time.Time
	for _, w := range f.layout.WindowsOf(name) {
		if w.Kind == bytime.KindTrend {
			continue
		}
		cur := w.Unit.Start(at, f.layout.Zone)
		if st, ok := p.Windows[w.Field]; !ok || st.Bucket.After(cur) {
			if !bornBy(p, cur) && now.Sub(cur) <= NewWindowLag && !slices.ContainsFunc(starts, cur.Equal) && len(starts) < maxBoundaryReads {
				starts = append(starts, cur) // a window new to the document: its first bucket from its start
			}
			continue
		}
		if p.NextBoundary.IsZero() {
			continue
		}
		for b := p.NextBoundary; !b.After(cur); b = w.Unit.Next(b, f.layout.Zone) {
			if now.Sub(b) <= min(BoundaryLag, DefaultRetention) && !slices.ContainsFunc(starts, b.Equal) && len(starts) < maxBoundaryReads {
				starts = append(starts, b)
			}
			if b.Before(p.NextBoundary) || len(starts) >= maxBoundaryReads {
				break
			}
		}
	}
	return starts
}

// readStarts reads the counts at each of starts that s holds no read of.
func (f *Folder) readStarts(ctx context.Context, name string, p Parent, s *Sum, starts []time.Time) error {
	for _, b := range starts {
		if s.read(b) {
			continue
		}
		vals, err := f.countsAt(ctx, name, p.Life, b.Add(-time.Microsecond))
		if err != nil {
			return err
		}
		s.Boundaries = append(s.Boundaries, Boundary{At: b, Values: vals})
	}
	return nil
}

// readable is how far back a fold reads the counts at a past instant:
// within Firestore's retention, with a margin for the read's own time.
const readable = DefaultRetention - 5*time.Minute

// probe reads, for the fold s onto p, whether the counts changed between
// the last fold and the starts it crosses unread (see ReadBoundaries).
func (f *Folder) probe(ctx context.Context, name string, p Parent, s *Sum, now time.Time) error {
	if !f.windowedChanged(name, p, *s) {
		return nil
	}
	unread := f.crossedUnread(name, p, *s)
	if len(unread) == 0 {
		return nil
	}
	latest := unread[0]
	at := latest
	if earliest := now.Add(-readable); at.Before(earliest) {
		at = earliest // the latest start is past the retention: as close to it as can be read
	}
	vals, err := f.countsAt(ctx, name, p.Life, at.Add(-time.Microsecond))
	if err != nil {
		return err
	}
	if f.sameWindowed(name, vals, p.Totals) {
		s.Quiet = at // no increment between the last fold and at
		return nil
	}
	var starts []time.Time
	for _, b := range unread {
		if now.Sub(b) <= readable && len(starts) < maxBoundaryReads {
			starts = append(starts, b)
		}
	}
	if at.Equal(latest) {
		s.Boundaries = append(s.Boundaries, Boundary{At: latest, Values: vals})
	}
	return f.readStarts(ctx, name, p, s, starts)
}

// crossedUnread are the starts of buckets of the windows of name that the
// fold s onto p crosses, and s holds no read of, latest first: of each
// window, from its current bucket's start back to the bucket it was of,
// at most maxBoundaryReads each, and none before the retention but the
// latest.
func (f *Folder) crossedUnread(name string, p Parent, s Sum) []time.Time {
	at := s.windowAt()
	var out []time.Time
	for _, w := range f.layout.WindowsOf(name) {
		st, ok := p.Windows[w.Field]
		if w.Kind == bytime.KindTrend || !ok {
			continue
		}
		n := 0
		for b := w.Unit.Start(at, f.layout.Zone); b.After(st.Bucket) && n < maxBoundaryReads; b = w.Unit.Prev(b, f.layout.Zone) {
			if !s.read(b) && !slices.ContainsFunc(out, b.Equal) {
				out = append(out, b)
			}
			if n++; at.Sub(b) > readable {
				break
			}
		}
	}
	slices.SortFunc(out, func(a, b time.Time) int { return b.Compare(a) })
	return out
}

// windowedChanged reports whether any count a window of name needs has
// changed since p, by the fold s.
func (f *Folder) windowedChanged(name string, p Parent, s Sum) bool {
	return !f.sameWindowed(name, s.Values, p.Totals)
}

// sameWindowed reports whether a and b hold the same value of every count
// a window of name needs.
func (f *Folder) sameWindowed(name string, a, b []int64) bool {
	for i := range f.layout.Counts(name) {
		if !f.layout.windowed(name, i) {
			continue
		}
		if i >= len(a) || i >= len(b) || a[i] != b[i] {
			return false
		}
	}
	return true
}

// countsAt sums each windowed count of name's shards of life at the read
// time at: one aggregation each, in one read-only transaction.
func (f *Folder) countsAt(ctx context.Context, name, life string, at time.Time) ([]int64, error) {
	counts := f.layout.Counts(name)
	vals := make([]int64, len(counts))
	err := f.client.RunTransaction(ctx, func(ctx context.Context, tx *firestore.Transaction) error {
		for i, c := range counts {
			if !f.layout.windowed(name, i) {
				continue
			}
			res, err := f.aggregation(name, life, c).Transaction(tx).Get(ctx)
			if err != nil {
				return err
			}
			s := Sum{Values: vals, Shards: make([]int64, len(counts))}
			if err := sumOf(res, &s, i); err != nil {
				return err
			}
		}
		return nil
	}, firestore.ReadOnly, firestore.TransactionReadTime(Precise(at)))
	if err != nil {
		return nil, fmt.Errorf("core: counts of %s at %s: %w", name, at.Format(time.RFC3339Nano), err)
	}
	return vals, nil
}

// bornBy reports whether the document p was created at or after b:
// nothing of its life was counted before b, so its counts there are 0.
func bornBy(p Parent, b time.Time) bool {
	return !p.Born.IsZero() && !b.After(p.Born)
}

// windowAt is the instant the fold s moves windows to: its read time, or,
// for the boundary job, the start of the bucket it reads just before.
func (s Sum) windowAt() time.Time {
	if !s.BucketStart.IsZero() {
		return s.BucketStart
	}
	return s.At
}

// valueAt is count i's value at the start b of a bucket: as read there, or
// as the document's last fold found it (no fold, no increment, since).
func (s Sum) valueAt(p Parent, i int, b time.Time) int64 {
	for _, x := range s.Boundaries {
		if x.At.Equal(b) && i < len(x.Values) {
			return x.Values[i]
		}
	}
	if i < len(p.Totals) {
		return p.Totals[i]
	}
	return 0
}

// moveWindows is each per and over window of the document name after the
// fold s onto p, whose counts are totals: their values, their states, and
// the next start of a bucket at which one of them changes with no
// increment (zero if none does).
func (f *Folder) moveWindows(name string, p Parent, s Sum, totals []int64) (values map[string]int64, states map[string]bytime.State, next time.Time, unread []time.Time) {
	loc := f.layout.Zone
	counts := f.layout.Counts(name)
	at := s.windowAt()
	values, states = map[string]int64{}, map[string]bytime.State{}
	for _, w := range f.layout.WindowsOf(name) {
		i := slices.IndexFunc(counts, func(c Count) bool { return c.Field == w.Count })
		if w.Kind == bytime.KindTrend || i < 0 {
			continue
		}
		cur := w.Unit.Start(at, loc)
		st := moveWindow(w, i, cur, loc, p, s, totals, &unread)
		v := totals[i] - st.Base
		if w.Kind == bytime.KindOver {
			for b, k := w.Unit.Prev(cur, loc), 1; k < w.N; b, k = w.Unit.Prev(b, loc), k+1 {
				v += st.Series[calendar.BucketKey(b)]
			}
		}
		values[w.Field], states[w.Field] = v, st
		changed := i >= len(p.Totals) || totals[i] != p.Totals[i]
		if changed || v != 0 {
			if n := w.Unit.Next(cur, loc); next.IsZero() || n.Before(next) {
				next = n
			}
		}
	}
	return values, states, next, unread
}

// moveWindow is the state of the window w, of the i'th count, in the
// bucket that starts at cur, after the fold s onto p whose counts are
// totals: a first bucket for a window new to the document, or its state
// rolled on to cur. The starts it crosses unread while the count changed
// are added to unread.
func moveWindow(w bytime.Window, i int, cur time.Time, loc *time.Location, p Parent, s Sum, totals []int64, unread *[]time.Time) bytime.State {
	st, ok := p.Windows[w.Field]
	switch {
	case !ok || st.Bucket.After(cur):
		// A window new to the document: its first bucket counts from
		// the bucket's start if the document was created since, or
		// its count there was read; else from this fold.
		base := totals[i]
		if bornBy(p, cur) {
			base = 0
		}
		for _, x := range s.Boundaries {
			if x.At.Equal(cur) && i < len(x.Values) {
				base = x.Values[i]
			}
		}
		return bytime.State{Bucket: cur, Base: base, Series: map[string]int64{}}
	case st.Bucket.Before(cur):
		st = st.Clone()
		changed := i < len(p.Totals) && totals[i] != p.Totals[i]
		st.Roll(w, cur, loc, func(b time.Time) int64 {
			if changed && !s.read(b) && b.After(s.Quiet) && !slices.ContainsFunc(*unread, b.Equal) {
				*unread = append(*unread, b) // the count changed since the last fold, and could not be read at b
			}
			return s.valueAt(p, i, b)
		})
	}
	return st
}

// read reports whether s holds the counts read at the bucket start b.
func (s Sum) read(b time.Time) bool {
	return slices.ContainsFunc(s.Boundaries, func(x Boundary) bool { return x.At.Equal(b) })
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
func (m moved) apply(p *Parent) {
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
func (f *Folder) timeUpdates(name string, p Parent, s Sum, counts bool, aggregates map[string]any) ([]firestore.Update, moved) {
	ws := f.layout.WindowsOf(name)
	if len(ws) == 0 || !counts && aggregates == nil {
		return nil, moved{}
	}
	m := moved{ok: true, windows: p.Windows, trends: map[string]float64{}, next: p.NextBoundary}
	var updates []firestore.Update
	totals := p.Totals
	if counts {
		totals = f.totals(name, p, s)
		var values map[string]int64
		values, m.windows, m.next, m.unread = f.moveWindows(name, p, s, totals)
		for field, v := range values {
			updates = append(updates,
				firestore.Update{FieldPath: firestore.FieldPath{field}, Value: v},
				firestore.Update{FieldPath: append(f.layout.path(FieldWindows), field), Value: m.windows[field].Stored(windowNamed(ws, field), f.layout.Zone)})
		}
		var next any = firestore.Delete
		if !m.next.IsZero() {
			next = m.next
		}
		updates = append(updates, firestore.Update{FieldPath: f.layout.path(FieldNextBoundary), Value: next})
	}
	at := s.At
	if !s.Weigh.IsZero() && s.Weigh.Before(at) && s.Weigh.After(p.AsOf) {
		at = s.Weigh
	}
	for _, w := range ws {
		if w.Kind != bytime.KindTrend {
			continue
		}
		S, ok := p.Trends[w.Field]
		if !ok {
			S = math.Inf(-1)
		}
		d := f.layout.trendDelta(name, w, p, totals, aggregates)
		next := bytime.TrendAdd(S, d, at, w.HalfLife)
		m.trends[w.Field] = next
		if ok && next == S {
			continue
		}
		updates = append(updates,
			firestore.Update{FieldPath: firestore.FieldPath{w.Field}, Value: next},
			firestore.Update{FieldPath: append(f.layout.path(FieldTrends), w.Field), Value: map[string]any{
				"h": w.HalfLife.Seconds(), "l": bytime.Landmark}})
	}
	return updates, m
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
		if u.Value == firestore.Delete {
			continue
		}
		m := data
		for _, seg := range u.FieldPath[:len(u.FieldPath)-1] {
			sub, _ := m[seg].(map[string]any)
			if sub == nil {
				sub = map[string]any{}
				m[seg] = sub
			}
			m = sub
		}
		m[u.FieldPath[len(u.FieldPath)-1]] = u.Value
	}
}
