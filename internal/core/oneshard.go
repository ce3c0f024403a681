package core

import (
	"time"

	"cloud.google.com/go/firestore"
)

// A counter on one shard, and a fold with no read. See the package guide:
// shard 0's counts after a write are the whole counts at its update time
// while the counted document has one shard (Layout.OneShard), and had it
// before the write (Parent.Whole). Increment writes, with the first
// increment after each read of the document, the document's update time
// as read (package adder, FieldParentSeen), so that a fold knows a version
// to compare and set on with no read (SeenAt). Every step is safe on its
// own: a document that changed since fails the fold's compare-and-set,
// which then reads it and sums.

// OneShard reports whether a counted document's data, as read, puts every
// increment on shard 0 and holds nothing on any other: num_shards is 1 (or,
// on an app's document, absent, with defaults 1; a parent in the guide
// layout without it was made by someone else), no shrink is under way, and
// it holds no bookkeeping of tally before 2.
func (l Layout) OneShard(data map[string]any, defaults int) bool {
	n, err := l.NumShards(data)
	_, legacy := data[FieldLegacy]
	return err == nil && l.OnOneShard(n, defaults, l.Resharding(data), legacy && !l.OnDocs())
}

// OnOneShard is OneShard's rule on what was read of a counted document:
// its num_shards (0 if absent), whether it is shrinking to one shard, and
// whether it holds bookkeeping of tally before 2 (only ever in the guide
// layout).
func (l Layout) OnOneShard(numShards, defaults int, resharding, legacy bool) bool {
	if numShards == 0 && l.OnDocs() {
		numShards = defaults
	}
	return numShards == 1 && !resharding && !legacy
}

// ParentSeenPath is the field path, on shard 0, of the counted document's
// update time as the increment that wrote it had read it.
func (l Layout) ParentSeenPath() firestore.FieldPath { return l.FieldPath(FieldParentSeen) }

// ParentRankPath is the field path, on shard 0, of the cells the counted
// document recorded at that update time (package rank), by field.
func (l Layout) ParentRankPath() firestore.FieldPath { return l.FieldPath(FieldParentRank) }

// OneShard is what a write to shard 0 tells: each count's value on shard 0
// after the write, and, when Increment wrote it just after reading the
// counted document with one shard, that document's update time (Seen). If
// the counter is on one shard on the document as a fold knows it, and was
// before the write (Parent.Whole), these values are the whole counts at
// the write's time, and the fold writes them with no sum. A fold that
// knows no document newer than Seen writes them with no read at all,
// compare-and-set on Seen (SeenAt); if the document changed since, that
// fails, and the fold reads it as any other does: a stale Seen costs a
// read, never a wrong count.
type OneShard struct {
	Seen   time.Time      // zero if the write carried none
	Ranked map[string]any // the cells the document recorded at Seen, by field (package rank); nil if none
	Values []int64        // each count's value on the shard, in Layout.Counts order
	Held   []bool         // whether the shard holds each count's field
}

// ReadOneShard reads what a write to shard 0 of counter id tells, from the
// shard's fields after the write: field gives the value at a field path
// as an int64 (an integer), a time.Time (a timestamp), a map of the
// integers a map holds, or anything else, and whether the shard holds
// it. It is nil if a count's field holds no integer (a sum would not add
// it as one: let a fold see it), or the shard
// holds no count.
func (l Layout) ReadOneShard(id string, field func(path ...string) (any, bool)) *OneShard {
	counts := l.Counts(id)
	one := &OneShard{Values: make([]int64, len(counts)), Held: make([]bool, len(counts))}
	if v, ok := field(l.ParentSeenPath()...); ok {
		if t, ok := v.(time.Time); ok {
			one.Seen = Precise(t)
		}
	}
	if v, ok := field(l.ParentRankPath()...); ok {
		if cells, ok := v.(map[string]any); ok && len(cells) > 0 {
			one.Ranked = cells
		}
	}
	held := false
	for i, c := range counts {
		v, ok := field(c.Shard)
		if !ok {
			continue
		}
		n, ok := v.(int64)
		if !ok {
			return nil
		}
		one.Values[i], one.Held[i], held = n, true, true
	}
	if !held {
		return nil
	}
	return one
}

// SeenAt is the parent an event of a counter on one shard tells of (see
// OneShard): in the given life, it had one shard at updated, and the
// server's clock had passed at, the event's time, by the local time now.
func SeenAt(life string, updated, at, now time.Time) Parent {
	return Parent{Exists: true, Life: life, Updated: updated, Written: updated, NumShards: 1, OneSince: updated, Seen: true, Anchor: at, AnchorAt: now}
}

// OneShard reports whether, on the parent as known, shard 0 holds the
// whole count (see Layout.OneShard).
func (p Parent) OneShard(l Layout, defaults int) bool {
	return p.Exists && l.OnOneShard(p.NumShards, defaults, p.Resharding, p.Legacy)
}

// Whole reports whether shard 0's counts after a write at time at are the
// whole counts that a fold may write onto the parent p: p has one shard,
// and had it before at (OneSince: a fold that wrote p without growing it
// keeps what it knew), so that no write at or after at went elsewhere,
// and none is due on another shard.
func (p Parent) Whole(l Layout, defaults int, at time.Time) bool {
	return p.OneShard(l, defaults) && p.OneSince.Before(at)
}
