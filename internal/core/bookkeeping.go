package core

import (
	"fmt"
	"time"

	"cloud.google.com/go/firestore"
)

// NumShards reads num_shards from a parent's data: 0 when it is absent, an
// error when it is not a whole number in [1, MaxShards]. A whole double
// (as some clients write numbers) counts.
func NumShards(data map[string]any) (int, error) {
	v, ok := data[FieldNumShards]
	if !ok || v == nil {
		return 0, nil
	}
	var n int64
	switch x := v.(type) {
	case int64:
		n = x
	case float64:
		if n = int64(x); float64(n) != x {
			n = 0
		}
	}
	if n < 1 || n > MaxShards {
		return 0, fmt.Errorf("%s is %v, want an integer in [1, %d]", FieldNumShards, v, MaxShards)
	}
	return int(n), nil
}

// bookkeeping is where tally's own fields are in a counted document's
// data: at its top in the guide layout, in the _tally map on documents.
func (l Layout) bookkeeping(data map[string]any) map[string]any { return l.kind().bookkeeping(data) }

// NumShards reads num_shards from a counted document's data (see the
// function NumShards).
func (l Layout) NumShards(data map[string]any) (int, error) { return NumShards(l.bookkeeping(data)) }

// AsOf reads as_of from a counted document's data: the time of the
// snapshot its counts sum; zero if absent or not a timestamp.
func (l Layout) AsOf(data map[string]any) time.Time {
	t, _ := l.bookkeeping(data)[FieldAsOf].(time.Time)
	return t
}

// Written is when tally last wrote a counted document's counts, given its
// data and update time. In the guide layout, where nothing else writes
// the parent, it is the update time. On documents it is _tally.written, or,
// when the document's update time is at most WrittenSlack after that, the
// update time: then no write of the app's came between, and the update
// time is the commit's own, exactly; or the app wrote just after, and the
// spacing runs from its write instead, which only ever waits longer.
func (l Layout) Written(data map[string]any, updated time.Time) time.Time {
	return l.kind().written(data, updated)
}

// CountValues reads each count's value from a counted document's data: 0
// where absent or not an integer.
func (l Layout) CountValues(data map[string]any, counts []Count) []int64 {
	out := make([]int64, len(counts))
	for i, c := range counts {
		out[i], _ = data[c.Field].(int64)
	}
	return out
}

// FieldPath is the path of tally's bookkeeping field on a counted
// document: in _tally on an app's document, at the top in the guide
// layout.
func (l Layout) FieldPath(field string) firestore.FieldPath { return l.kind().fieldPath(field) }

// Resharding reports whether a counted document's data says it is
// shrinking to one shard: its other shards may still hold counts.
func (l Layout) Resharding(data map[string]any) bool {
	_, ok := l.bookkeeping(data)[FieldResharding]
	return ok
}

// AsOfPath, NumShardsPath, ReshardingPath, ParentSeenPath (on a shard)
// and WrittenPath are the field paths of tally's bookkeeping on a counted
// document. WrittenPath is nil in the guide
// layout, whose parent's update time says the same.
func (l Layout) AsOfPath() firestore.FieldPath { return l.FieldPath(FieldAsOf) }

func (l Layout) NumShardsPath() firestore.FieldPath { return l.FieldPath(FieldNumShards) }

func (l Layout) ReshardingPath() firestore.FieldPath { return l.FieldPath(FieldResharding) }

func (l Layout) WrittenPath() firestore.FieldPath { return l.kind().writtenPath() }

// SetAt sets v at path in m, making the maps on its way: a write's data
// holds a field path in whatever shape the layout gives it.
func SetAt(m map[string]any, path firestore.FieldPath, v any) {
	for _, seg := range path[:len(path)-1] {
		sub, _ := m[seg].(map[string]any)
		if sub == nil {
			sub = map[string]any{}
			m[seg] = sub
		}
		m = sub
	}
	m[path[len(path)-1]] = v
}

// WritesPath is the field path of a shard's FieldWrites: in tally's
// bookkeeping on the shard (_tally.writes) on documents, a field of the
// shard's own in the guide layout.
func (l Layout) WritesPath() firestore.FieldPath { return l.FieldPath(FieldWrites) }
