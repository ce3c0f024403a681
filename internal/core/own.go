package core

import (
	"slices"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/internal/core/bytime"
)

// A quiet document counted in itself. An increment of a document that had
// no write for a fold spacing may be written into the document itself,
// in one write: the count's field and, in _tally.own, the same amount
// again, with the document's update time as read for a precondition (so
// that the document had no other write in between), and _tally.written
// set to the commit's time. No shard, no event, no fold.
// _tally.own is the part of each count no shard holds: every fold writes
// a count as its shards' sum plus its own part, read with the update
// time it compares and sets on, so a count stays exact whichever way each
// increment went. The write moves the count's windows and trends as a
// fold would (OwnTimeUpdates), so it is made only while the document's
// windows are in their current buckets; a count that a board ranks, or
// that weighs in a trend a board ranks, always goes to a shard: a move
// between cells is a fold's.

// FieldOwn is a document's own part, in its bookkeeping: by each count's
// shard field, what was written to the document itself.
const FieldOwn = "own"

// OwnPath is the field path, on a counted document, of count c's own
// part.
func (l Layout) OwnPath(c Count) firestore.FieldPath {
	return append(l.FieldPath(FieldOwn), c.Shard)
}

// OwnValues reads each count's own part from a counted document's data,
// in counts' order: 0 where absent or not an integer; nil if none is
// there.
func (l Layout) OwnValues(data map[string]any, counts []Count) []int64 {
	own, _ := l.bookkeeping(data)[FieldOwn].(map[string]any)
	if len(own) == 0 {
		return nil
	}
	out := make([]int64, len(counts))
	for i, c := range counts {
		out[i], _ = own[c.Shard].(int64)
	}
	return out
}

// CountedInItself reports whether an increment of count c of the
// counted document name may be written into the document itself: a count
// on an app's document that no board ranks, in itself or in a trend.
func (l Layout) CountedInItself(name string, c Count) bool {
	if !l.OnDocs() {
		return false
	}
	for _, b := range l.Boards(name) {
		if b.Field == c.Field {
			return false
		}
		for _, w := range l.WindowsOf(name) {
			if w.Field == b.Field && w.Kind == bytime.KindTrend && slices.ContainsFunc(w.Terms, func(t bytime.Term) bool { return t.Field == c.Field }) {
				return false
			}
		}
	}
	return true
}

// WithOwn is values with own added, count by count: the counts a fold of
// the shards' sums values writes onto a document whose own part is own.
func WithOwn(values, own []int64) []int64 {
	if len(own) == 0 {
		return values
	}
	out := make([]int64, len(values))
	for i, v := range values {
		out[i] = v
		if i < len(own) {
			out[i] += own[i]
		}
	}
	return out
}
