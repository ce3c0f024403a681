package adder

import (
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/internal/core"
)

// fields is what a write adding by (an amount by shard field) puts on the
// shard: the increments and, on the first write after a read of the
// parent of a counter on one shard, the parent's update time as read,
// with the cells it recorded then if it is ranked; any other write
// deletes those left on the shard by an earlier one, so that no event
// carries any older than its writer knew.
func (a *Adder) fields(id string, p parent, by map[string]int64) map[string]any {
	var seen, ranked any = firestore.Delete, firestore.Delete
	if !p.seen.IsZero() && a.counts.claim(id, p.seen) {
		seen = p.seen
		if len(p.ranked) > 0 {
			ranked = p.ranked
		}
	}
	return ShardFields(a.layout, by, seen, ranked)
}

// ShardFields is what a write adding to a shard of l puts on it: an
// increment of each count by its amount (by shard field), one more write
// counted (core.FieldWrites), and the counted document's update time and cells
// as seen (or firestore.Delete of those), for a merge of every field.
func ShardFields(l core.Layout, by map[string]int64, seen, ranked any) map[string]any {
	m := make(map[string]any, len(by)+1)
	for f, n := range by {
		m[f] = firestore.Increment(n)
	}
	core.SetAt(m, l.ParentSeenPath(), seen)
	core.SetAt(m, l.ParentRankPath(), ranked)
	core.SetAt(m, l.WritesPath(), firestore.Increment(1))
	return m
}

// claim reports whether a write of counter id may carry seen, its parent's
// update time as read: only the first write after each read does. After
// it, a fold has most likely written the parent, and an older update time
// would send the fold's compare-and-set to fail; a write that carries none
// has the fold read the parent instead.
func (s *shardCounts) claim(id string, seen time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.entries.Peek(id)
	if !ok || e.carried || !e.seen.Equal(seen) {
		return false
	}
	e.carried = true
	s.entries.Add(id, e)
	return true
}
