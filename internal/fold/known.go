package core

import (
	"math"
	"time"

	"cloud.google.com/go/firestore"
)

// Known is what a caller read of a counted document and summed of its
// shards, for a fold: the document as read (Parent, read at Parent.Anchor)
// and its shards' sum at a read time no later (Sum.At), with the number of
// each shard of its life that exists then (Shards). A part of Reconcile
// knows its counters with a batched read and one query in all (package
// counter), where a fold of each would read its document and aggregate
// its shards.
type Known struct {
	Parent Parent
	Sum    Sum
	Shards []int
}

// Add adds a shard's counts into s, as sum() and count() over the shards
// holding each would: false if one is no integer, or the sum passes int64.
func (s *Sum) Add(counts []Count, snap *firestore.DocumentSnapshot) bool {
	for i, c := range counts {
		v, err := snap.DataAt(c.Shard)
		if err != nil || v == nil {
			continue
		}
		n, ok := v.(int64)
		if !ok || n > 0 && s.Values[i] > math.MaxInt64-n || n < 0 && s.Values[i] < math.MinInt64-n {
			return false
		}
		s.Values[i] += n
		s.Shards[i]++
	}
	return true
}

// NewKnown is what a read of the counted document id tells, with no
// shard summed yet: its sum is 0 at the read time at.
func (l Layout) NewKnown(id string, snap *firestore.DocumentSnapshot, at, returned time.Time) *Known {
	p := ParentFrom(l, id, snap, returned)
	return &Known{Parent: p, Sum: newSum(at, p.Life, len(l.Counts(id)))}
}
