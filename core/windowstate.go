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
