package bytime

import (
	"maps"
	"time"

	"github.com/tallycounters/tally/internal/core/calendar"
)

// State is a per or over window as its counted document keeps it.
type State struct {
	Bucket time.Time        // b: the start of the bucket the window is of
	Base   int64            // v: the count just before Bucket
	Series map[string]int64 // s: each closed bucket's count, by calendar.BucketKey
}

// States reads the windows' states as a counted document's bookkeeping
// holds them (windows, by field); one of the wrong shape is left out, and
// starts again.
func States(v any) map[string]State {
	m, _ := v.(map[string]any)
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]State, len(m))
	for f, v := range m {
		e, _ := v.(map[string]any)
		b, ok := e["b"].(time.Time)
		base, ok2 := e["v"].(int64)
		if !ok || !ok2 {
			continue
		}
		st := State{Bucket: b, Base: base, Series: map[string]int64{}}
		s, _ := e["s"].(map[string]any)
		for k, x := range s {
			if n, ok := x.(int64); ok {
				st.Series[k] = n
			}
		}
		out[f] = st
	}
	return out
}

// Stored is st as the bookkeeping holds it, for window w in zone loc.
func (st State) Stored(w Window, loc *time.Location) map[string]any {
	s := make(map[string]any, len(st.Series))
	for k, v := range st.Series {
		s[k] = v
	}
	return map[string]any{"b": st.Bucket, "v": st.Base, "s": s, "n": w.Unit.Next(st.Bucket, loc), "c": w.Count, "u": string(w.Unit), "k": w.Kind}
}

// Clone is a copy of st that shares nothing with it.
func (st State) Clone() State {
	st.Series = maps.Clone(st.Series)
	return st
}

// Roll moves st, a window w's state, on to the bucket that starts at cur:
// each bucket closed since st.Bucket gets its count, the difference of
// the counts at its start and its end (value), and only the buckets w
// keeps stay. A bucket that counted nothing is kept as 0, so that the
// series lists every bucket since the window began, and a client reads
// it without knowing the time zone.
func (st *State) Roll(w Window, cur time.Time, loc *time.Location, value func(time.Time) int64) {
	keep := w.N
	if w.Kind == KindOver {
		keep = w.N - 1
	}
	oldest := cur
	for range keep {
		oldest = w.Unit.Prev(oldest, loc)
	}
	for b := w.Unit.Next(st.Bucket, loc); !b.After(cur); b = w.Unit.Next(b, loc) {
		v := value(b)
		if !st.Bucket.Before(oldest) {
			st.Series[calendar.BucketKey(st.Bucket)] = v - st.Base
		}
		st.Bucket, st.Base = b, v
		if b.Before(oldest) && w.Unit.Next(b, loc).Before(oldest) {
			// Buckets past what is kept, with no read in them: skip to
			// the first kept one, as each of them counts nothing.
			b = w.Unit.Prev(oldest, loc)
			st.Bucket = b
		}
	}
	for k := range st.Series {
		if t, err := time.Parse(time.RFC3339, k); err != nil || t.Before(oldest) || !t.Before(cur) {
			delete(st.Series, k)
		}
	}
}

// MaxWindowBytes bounds what a document's windows and trends take of it,
// by Firestore's storage sizes: a quarter of its 1 MiB, so that the app's
// own fields, its counts and tally's other bookkeeping keep the rest. A
// declaration whose windows could pass it is refused.
const MaxWindowBytes = 256 << 10

// Sizes of stored values, by Firestore's storage sizes: a string is its
// bytes and 1, an integer, a double or a timestamp 8; a map is its keys
// and values. BucketBytes is a series entry's.
const (
	BucketBytes = len("2026-01-02T03:04:05Z") + 1 + 8 // a series entry: its start, as calendar.BucketKey writes it, and its count
	valueBytes  = 8
)

func stringBytes(s string) int { return len(s) + 1 }

// Bytes is the most that w takes of its document: its field, and its
// state in tally's bookkeeping, with every bucket it keeps.
func (w Window) Bytes() int {
	field := stringBytes(w.Field) + valueBytes
	if w.Kind == KindTrend {
		return field + stringBytes(w.Field) + 2*(stringBytes("h")+valueBytes) // trends.{field}: h, l
	}
	keep := w.N
	if w.Kind == KindOver {
		keep = w.N - 1
	}
	state := 4*(stringBytes("b")+valueBytes) + // b, v, n, and s's name with nothing in it
		stringBytes("c") + stringBytes(w.Count) + stringBytes("u") + stringBytes(string(w.Unit)) + stringBytes("k") + stringBytes(w.Kind) +
		keep*BucketBytes
	return field + stringBytes(w.Field) + state
}
