package rollup

import (
	"fmt"
	"time"

	"github.com/googleapis/google-cloudevents-go/cloud/firestoredata"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/core/aggregate"
	"github.com/tallycounters/tally/internal/extension"
)

// eventHint is what a shard's write event tells the rollup: counter Counter
// changed at time At, and, for a write to shard 0, the counts on it (One),
// which are the whole counts at At if the counter is on one shard.
type eventHint struct {
	EventID string
	Counter string
	Life    string // of the counted document the shard is of; "" in the guide layout
	Shard   int
	// At is the shard's update_time after the write. A delete carries no
	// time of its own; At is then an upper bound of when it committed.
	At time.Time
	// One is set for a write to shard 0 whose counts are integers.
	One *core.OneShard
	// Child is set for a write to a child of an aggregated collection:
	// the aggregates of Counter over Child's part changed at At.
	Child *aggregate.Child
	// LeftOut, for a child's write, are the greatest and least of Counter
	// (their fields) that the child's value, no finite number, is left
	// out of: a write the rules refuse, made past them.
	LeftOut []string
	// Created is set for the creation of the counted document Counter, at
	// At, in Life: it has no counts until a fold gives it every one.
	Created bool
	// Extension is set for a write of a shard or partial of the
	// firestore-counter extension's: document Counter has counts to move
	// as of At (package extension), in the shard or partial of id
	// ExtShard.
	Extension bool
	ExtShard  string
	// Gone is set for the deletion of the ranked document Counter in
	// Life: its last state, whose bookkeeping records the cells it was
	// counted in (package rank).
	Gone *firestoredata.Document
}

func (h eventHint) String() string {
	if h.Created {
		return fmt.Sprintf("%s created@%s", h.Counter, h.At.Format(time.RFC3339Nano))
	}
	if h.Gone != nil {
		return fmt.Sprintf("%s deleted@%s", h.Counter, h.At.Format(time.RFC3339Nano))
	}
	if h.Extension {
		return fmt.Sprintf("%s/%s@%s", h.Counter, extension.Collection, h.At.Format(time.RFC3339Nano))
	}
	if h.Child != nil {
		return fmt.Sprintf("%s/%s/%s@%s", h.Counter, h.Child.Source, h.Child.ID, h.At.Format(time.RFC3339Nano))
	}
	if h.Life != "" {
		return fmt.Sprintf("%s/%s/%d@%s", h.Counter, h.Life, h.Shard, h.At.Format(time.RFC3339Nano))
	}
	return fmt.Sprintf("%s/%d@%s", h.Counter, h.Shard, h.At.Format(time.RFC3339Nano))
}
