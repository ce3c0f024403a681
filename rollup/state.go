package rollup

import (
	"fmt"
	"strconv"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/layout"
)

// Bookkeeping kept on the parent beside total, under rollup.shards.{n}: the
// last version of each shard that total reflects, and its count then.
const (
	fieldShards  = "shards"
	fieldVersion = "version"
	fieldCount   = "count"
	fieldDeleted = "deleted"
)

// applied is what total already holds of one shard.
type applied struct {
	Version time.Time
	Count   int64 // 0 when Deleted
	Deleted bool  // the shard was deleted at Version
}

// counted is the shard's contribution to total.
func (a applied) counted() int64 {
	if a.Deleted {
		return 0
	}
	return a.Count
}

// entry is how a is stored under rollup.shards.{n}.
func (a applied) entry() map[string]any {
	return map[string]any{fieldVersion: a.Version, fieldCount: a.Count, fieldDeleted: a.Deleted}
}

// parentState is the rollup's view of counters/{id}.
type parentState struct {
	Exists    bool
	Total     int64
	NumShards int64 // 0 when absent
	Shards    map[int]applied
	grown     bool // NumShards changed: write it
}

// readParent parses the parent document; a missing parent is an empty state.
func readParent(snap *firestore.DocumentSnapshot) (parentState, error) {
	st := parentState{Shards: map[int]applied{}}
	if snap == nil || !snap.Exists() {
		return st, nil
	}
	st.Exists = true
	data := snap.Data()
	if n, err := layout.NumShards(data); err == nil {
		st.NumShards = int64(n) // an unreadable num_shards is not grown
	}
	if v, ok := data[layout.FieldTotal]; ok && v != nil {
		n, ok := v.(int64)
		if !ok {
			return st, fmt.Errorf("field %s is %T, not an integer", layout.FieldTotal, v)
		}
		st.Total = n
	}
	bk, _ := data[layout.FieldRollup].(map[string]any)
	shards, _ := bk[fieldShards].(map[string]any)
	for key, raw := range shards {
		n, err := strconv.Atoi(key)
		m, ok := raw.(map[string]any)
		if err != nil || !ok {
			return st, fmt.Errorf("bookkeeping entry %s.%s.%q is malformed", layout.FieldRollup, fieldShards, key)
		}
		var a applied
		a.Version, _ = m[fieldVersion].(time.Time)
		a.Count, _ = m[fieldCount].(int64)
		a.Deleted, _ = m[fieldDeleted].(bool)
		if a.Version.IsZero() {
			return st, fmt.Errorf("bookkeeping entry %s.%s.%q has no version", layout.FieldRollup, fieldShards, key)
		}
		st.Shards[n] = a
	}
	return st, nil
}

// fields is the merge-set that records total and the given shards' state.
func (st parentState) fields(shards map[int]bool) (map[string]any, []firestore.FieldPath) {
	entries := make(map[string]any, len(shards))
	paths := []firestore.FieldPath{{layout.FieldTotal}}
	for n := range shards {
		a := st.Shards[n]
		key := strconv.Itoa(n)
		entries[key] = a.entry()
		paths = append(paths, firestore.FieldPath{layout.FieldRollup, fieldShards, key})
	}
	data := map[string]any{
		layout.FieldTotal:  st.Total,
		layout.FieldRollup: map[string]any{fieldShards: entries},
	}
	if st.grown {
		data[layout.FieldNumShards] = st.NumShards
		paths = append(paths, firestore.FieldPath{layout.FieldNumShards})
	}
	return data, paths
}
