package core

import (
	"maps"
	"time"
)

// A per or over window is kept, on its counted document, as its value
// (the field the app reads and orders by) and, in tally's bookkeeping,
// windows.{field}: the start of the bucket the value is of (b), the count
// at that start (v: its value a microsecond before, which a fold reads at
// that time, after the fact), the count in each closed bucket kept (s:
// bucket start, as BucketKey writes it, to count, 0 included), the end of the bucket
// (n), and the count, unit and kind it is of (c, u, k: per or over), for
// clients. A trend is
// kept as its field, log2 of its score at the landmark (trend.go), and,
// in trends.{field}, its half-life and landmark. next_boundary is the next
// start of a bucket at which some window changes with no increment: the
// boundary job moves the windows of the documents whose next_boundary has
// passed.

// Bookkeeping fields of windows.
const (
	FieldWindows      = "windows"
	FieldTrends       = "trends"
	FieldNextBoundary = "next_boundary"
)

// WindowState is a per or over window as its counted document keeps it.
type WindowState struct {
	Bucket time.Time        // b: the start of the bucket the window is of
	Base   int64            // v: the count just before Bucket
	Series map[string]int64 // s: each closed bucket's count, by BucketKey
}

// windowStates reads windows.{field} from a counted document's
// bookkeeping; one of the wrong shape is left out, and starts again.
func windowStates(book map[string]any) map[string]WindowState {
	m, _ := book[FieldWindows].(map[string]any)
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]WindowState, len(m))
	for f, v := range m {
		e, _ := v.(map[string]any)
		b, ok := e["b"].(time.Time)
		base, ok2 := e["v"].(int64)
		if !ok || !ok2 {
			continue
		}
		st := WindowState{Bucket: b, Base: base, Series: map[string]int64{}}
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

// stored is st as windows.{field} holds it, for window w in zone loc.
func (st WindowState) stored(w Window, loc *time.Location) map[string]any {
	s := make(map[string]any, len(st.Series))
	for k, v := range st.Series {
		s[k] = v
	}
	return map[string]any{"b": st.Bucket, "v": st.Base, "s": s, "n": w.Unit.Next(st.Bucket, loc), "c": w.Count, "u": string(w.Unit), "k": w.Kind}
}

// clone is a copy of st that shares nothing with it.
func (st WindowState) clone() WindowState {
	st.Series = maps.Clone(st.Series)
	return st
}

// StateOf reads the state of the window field from a counted document's
// data; zero if it has none.
func StateOf(l Layout, data map[string]any, field string) WindowState {
	return windowStates(l.bookkeeping(data))[field]
}

// MaxWindowBytes bounds what a document's windows and trends take of it,
// by Firestore's storage sizes: a quarter of its 1 MiB, so that the app's
// own fields, its counts and tally's other bookkeeping keep the rest. A
// declaration whose windows could pass it is refused.
const MaxWindowBytes = 256 << 10

// Sizes of stored values, by Firestore's storage sizes: a string is its
// bytes and 1, an integer, a double or a timestamp 8; a map is its keys
// and values.
const (
	bucketBytes = len("2026-01-02T03:04:05Z") + 1 + 8 // a series entry: its start, as BucketKey writes it, and its count
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
		keep*bucketBytes
	return field + stringBytes(w.Field) + state
}
