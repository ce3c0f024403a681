package core

import "github.com/tallycounters/tally/internal/core/bytime"

// A per or over window is kept, on its counted document, as its value (the
// field the app reads and orders by) and, in tally's bookkeeping,
// windows.{field}: the start of the bucket the value is of (b), the count
// at that start (v: its value a microsecond before, which a fold reads at
// that time, after the fact), the count in each closed bucket kept (s:
// bucket start, as calendar.BucketKey writes it, to count, 0 included),
// the end of the bucket (n), and the count, unit and kind it is of (c, u,
// k: per or over), for clients. A trend is kept as its field, log2 of its
// score at the landmark (package bytime), and, in trends.{field}, its
// half-life and landmark. next_boundary is the next start of a bucket at
// which some window changes with no increment: the boundary job moves the
// windows of the documents whose next_boundary has passed.

// Bookkeeping fields of windows.
const (
	FieldWindows      = "windows"
	FieldTrends       = "trends"
	FieldNextBoundary = "next_boundary"
)

// StateOf reads the state of the window field from a counted document's
// data; zero if it has none.
func StateOf(l Layout, data map[string]any, field string) bytime.State {
	return bytime.States(l.bookkeeping(data)[FieldWindows])[field]
}
