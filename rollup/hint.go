// Package rollup keeps counters/{id}.total equal to the sum of the counter's
// shards by snapshot folds: total is always sum() of the shards at one
// server read time, written with that time as as_of, at most once per
// window per counter, by whichever instance gets there first. A shard's
// write event is a hint that the counter changed at a time; its handler
// answers once the parent's as_of has reached that time. On a counter on
// one shard, shard 0's count after a write is that sum at the write's time,
// and a fold takes it from the write's event instead of summing (see
// oneshard.go).
//
// Counts on the app's documents (layout.Layout.Docs) fold the same way, a
// document at a time: each of its counts is summed over its shards on its
// own (an aggregation sees only the documents that hold every field it
// names), all at one read time, and written together in one update that
// names only the counts and tally's _tally map, on the condition that the
// document is as the fold read it. A write of the app's in between makes
// the fold read again and write again; a document the app deleted is never
// written, and the events of its shards are answered. A document deleted
// and created again at the same path is another life of it (see package
// layout): a fold sums the shards of the life the document has, and an
// event of another life's shard is only a hint.
package rollup

import (
	"fmt"
	"time"

	"github.com/tallycounters/tally/counting"
)

// Hint is what a shard's write event tells the rollup: counter Counter
// changed at time At, and, for a write to shard 0, the counts on it (One),
// which are the whole counts at At if the counter is on one shard.
type Hint struct {
	EventID string
	Counter string
	Life    string // of the counted document the shard is of; "" in the guide layout
	Shard   int
	// At is the shard's update_time after the write. A delete carries no
	// time of its own; At is then an upper bound of when it committed.
	At time.Time
	// One is set for a write to shard 0 whose counts are integers.
	One *counting.OneShard
}

func (h Hint) String() string {
	if h.Life != "" {
		return fmt.Sprintf("%s/%s/%d@%s", h.Counter, h.Life, h.Shard, h.At.Format(time.RFC3339Nano))
	}
	return fmt.Sprintf("%s/%d@%s", h.Counter, h.Shard, h.At.Format(time.RFC3339Nano))
}
