package bytime

import (
	"math"
	"slices"
	"time"

	"github.com/tallycounters/tally/internal/core/calendar"
)

// How a fold moves a document's windows. A fold at read time R writes
// each count's value at R; a window of it is that value less the count at
// the start of the window's first bucket. The count at a bucket's start B
// is read at B less a microsecond, after the fact (a read at a past read
// time), by the first fold after B of a document that was folded in the
// bucket before B (its next_boundary says so): usually the boundary
// job's, within seconds of B. A document that no fold touched in a bucket
// had no increment in it, and its count at the bucket's end is the count
// at its last fold: idle documents cost nothing. A Fold says which starts
// to read, and moves the windows once they are read; reading them is the
// caller's.

// BoundaryLag is how far back a fold reads a bucket's start that it
// crossed: an increment whose event reaches Rollup later than this after
// the end of its bucket, for a document that neither the boundary job nor
// a fold read at that end, is counted in the bucket its fold finds.
const BoundaryLag = 5 * time.Minute

// DefaultRetention is how far back Firestore reads at a past read time:
// an hour (seven days with point-in-time recovery).
const DefaultRetention = time.Hour

// Readable is how far back a fold reads the counts at a past instant:
// within Firestore's retention, with a margin for the read's own time.
const Readable = DefaultRetention - 5*time.Minute

// NewWindowLag is how far back a fold reads the start of the current
// bucket of a window new to the document (declared since its last fold,
// or its first fold): within it, the first bucket is exact; past it (a
// day's bucket, hours after midnight), past what Firestore keeps, the
// first bucket counts from the fold. A document created in the bucket
// needs no read: nothing of its life was counted before.
const NewWindowLag = DefaultRetention - 5*time.Minute

// MaxBoundaryReads bounds the bucket starts one fold reads.
const MaxBoundaryReads = 10

// Boundary is the counts of a document just before the start of a bucket,
// read at that time.
type Boundary struct {
	At     time.Time // the bucket's start; the counts are as of a microsecond before
	Values []int64   // each count's, in the Fold's Counts order
}

// Fold is what a fold knows of one document's windows: the document as
// its last fold left it, and what this fold has read.
type Fold struct {
	Windows []Window       // the document's windows and trends
	Counts  []string       // its counts, in the order of Totals, Values and Boundary.Values
	Zone    *time.Location // of the buckets

	States       map[string]State // each window as the last fold left it
	Totals       []int64          // the counts the last fold wrote
	NextBoundary time.Time        // the start at which the last fold's windows change with no increment
	Born         time.Time        // the document's creation; zero if its counts may predate it

	At         time.Time  // the instant this fold moves the windows to
	Values     []int64    // the counts this fold sums
	Boundaries []Boundary // the counts read at starts of buckets
	Quiet      time.Time  // an instant the counts were found as the last fold left them
}

// bornBy reports whether the document was created at or after b: nothing
// of its life was counted before b, so its counts there are 0.
func (f Fold) bornBy(b time.Time) bool {
	return !f.Born.IsZero() && !b.After(f.Born)
}

// Read reports whether f holds the counts read at the bucket start b.
func (f Fold) Read(b time.Time) bool {
	return slices.ContainsFunc(f.Boundaries, func(x Boundary) bool { return x.At.Equal(b) })
}

// Windowed reports whether a per or over window needs count i.
func (f Fold) Windowed(i int) bool {
	for _, w := range f.Windows {
		if w.Kind != KindTrend && i < len(f.Counts) && f.Counts[i] == w.Count {
			return true
		}
	}
	return false
}

// SameWindowed reports whether a and b hold the same value of every count
// a window needs.
func (f Fold) SameWindowed(a, b []int64) bool {
	for i := range f.Counts {
		if f.Windowed(i) && (i >= len(a) || i >= len(b) || a[i] != b[i]) {
			return false
		}
	}
	return true
}

// Due are the starts a fold at now reads first: the current bucket's
// start of a window new to the document, and each start crossed since
// NextBoundary within BoundaryLag; at most MaxBoundaryReads.
func (f Fold) Due(now time.Time) []time.Time {
	var starts []time.Time
	add := func(b time.Time) {
		if !slices.ContainsFunc(starts, b.Equal) && len(starts) < MaxBoundaryReads {
			starts = append(starts, b)
		}
	}
	for _, w := range f.Windows {
		if w.Kind == KindTrend {
			continue
		}
		cur := w.Unit.Start(f.At, f.Zone)
		if st, ok := f.States[w.Field]; !ok || st.Bucket.After(cur) {
			if !f.bornBy(cur) && now.Sub(cur) <= NewWindowLag {
				add(cur) // a window new to the document: its first bucket from its start
			}
			continue
		}
		if f.NextBoundary.IsZero() {
			continue
		}
		for b := f.NextBoundary; !b.After(cur); b = w.Unit.Next(b, f.Zone) {
			if now.Sub(b) <= min(BoundaryLag, DefaultRetention) {
				add(b)
			}
			if b.Before(f.NextBoundary) || len(starts) >= MaxBoundaryReads {
				break
			}
		}
	}
	return starts
}

// CrossedUnread are the starts of buckets that the fold crosses and holds
// no read of, latest first: of each window, from its current bucket's
// start back to the bucket it was of, at most MaxBoundaryReads each, and
// none before Readable but the latest.
func (f Fold) CrossedUnread() []time.Time {
	var out []time.Time
	for _, w := range f.Windows {
		st, ok := f.States[w.Field]
		if w.Kind == KindTrend || !ok {
			continue
		}
		n := 0
		for b := w.Unit.Start(f.At, f.Zone); b.After(st.Bucket) && n < MaxBoundaryReads; b = w.Unit.Prev(b, f.Zone) {
			if !f.Read(b) && !slices.ContainsFunc(out, b.Equal) {
				out = append(out, b)
			}
			if n++; f.At.Sub(b) > Readable {
				break
			}
		}
	}
	slices.SortFunc(out, func(a, b time.Time) int { return b.Compare(a) })
	return out
}

// valueAt is count i's value at the start b of a bucket: as read there, or
// as the document's last fold found it (no fold, no increment, since).
func (f Fold) valueAt(i int, b time.Time) int64 {
	for _, x := range f.Boundaries {
		if x.At.Equal(b) && i < len(x.Values) {
			return x.Values[i]
		}
	}
	if i < len(f.Totals) {
		return f.Totals[i]
	}
	return 0
}

// Move is each per and over window after the fold, whose counts are
// totals: their values, their states, the next start of a bucket at which
// one of them changes with no increment (zero if none does), and the
// starts it crossed unread while the count changed.
func (f Fold) Move(totals []int64) (values map[string]int64, states map[string]State, next time.Time, unread []time.Time) {
	values, states = map[string]int64{}, map[string]State{}
	for _, w := range f.Windows {
		i := slices.Index(f.Counts, w.Count)
		if w.Kind == KindTrend || i < 0 {
			continue
		}
		cur := w.Unit.Start(f.At, f.Zone)
		st := f.move(w, i, cur, totals, &unread)
		v := totals[i] - st.Base
		if w.Kind == KindOver {
			for b, k := w.Unit.Prev(cur, f.Zone), 1; k < w.N; b, k = w.Unit.Prev(b, f.Zone), k+1 {
				v += st.Series[calendar.BucketKey(b)]
			}
		}
		values[w.Field], states[w.Field] = v, st
		changed := i >= len(f.Totals) || totals[i] != f.Totals[i]
		if changed || v != 0 {
			if n := w.Unit.Next(cur, f.Zone); next.IsZero() || n.Before(next) {
				next = n
			}
		}
	}
	return values, states, next, unread
}

// move is the state of the window w, of the i'th count, in the bucket
// that starts at cur, after the fold whose counts are totals: a first
// bucket for a window new to the document, or its state rolled on to
// cur. The starts it crosses unread while the count changed are added to
// unread.
func (f Fold) move(w Window, i int, cur time.Time, totals []int64, unread *[]time.Time) State {
	st, ok := f.States[w.Field]
	switch {
	case !ok || st.Bucket.After(cur):
		// A window new to the document: its first bucket counts from
		// the bucket's start if the document was created since, or
		// its count there was read; else from this fold.
		base := totals[i]
		if f.bornBy(cur) {
			base = 0
		}
		for _, x := range f.Boundaries {
			if x.At.Equal(cur) && i < len(x.Values) {
				base = x.Values[i]
			}
		}
		return State{Bucket: cur, Base: base, Series: map[string]int64{}}
	case st.Bucket.Before(cur):
		st = st.Clone()
		changed := i < len(f.Totals) && totals[i] != f.Totals[i]
		st.Roll(w, cur, f.Zone, func(b time.Time) int64 {
			if changed && !f.Read(b) && b.After(f.Quiet) && !slices.ContainsFunc(*unread, b.Equal) {
				*unread = append(*unread, b) // the count changed since the last fold, and could not be read at b
			}
			return f.valueAt(i, b)
		})
	}
	return st
}

// TrendDelta is the change of the trend w's weighted terms from the last
// fold to this one: totals are the counts after it, before and after the
// aggregates' values before it and after it (after nil if this fold
// refolded none).
func (f Fold) TrendDelta(w Window, totals []int64, before, after map[string]any) float64 {
	var d float64
	for _, t := range w.Terms {
		if i := slices.Index(f.Counts, t.Field); i >= 0 && i < len(totals) {
			var was int64
			if i < len(f.Totals) {
				was = f.Totals[i]
			}
			d += t.Weight * float64(totals[i]-was)
		}
		if v, ok := after[t.Field]; ok {
			d += t.Weight * (number(v) - number(before[t.Field]))
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
