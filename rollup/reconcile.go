package rollup

import (
	"context"
	"fmt"
	"strconv"

	"cloud.google.com/go/firestore"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tallycounters/tally/layout"
)

// ErrNoCounter is returned for a counter without a parent. It is
// layout.ErrNoCounter.
var ErrNoCounter = layout.ErrNoCounter

// Drift is what Reconcile found and repaired.
type Drift struct {
	Counter string `json:"counter"`
	Total   int64  `json:"total"`  // the parent's total before
	Sum     int64  `json:"sum"`    // the shards' counts, now also the total
	Drift   int64  `json:"drift"`  // Total - Sum
	Shards  int    `json:"shards"` // shard documents read

	// Extra is how many of them are numbered past num_shards (left by an
	// increment that raced a reshard); NumShards is num_shards, 0 if unset.
	Extra     int `json:"extra_shards"`
	NumShards int `json:"num_shards"`
}

// Reconcile reads the parent and every shard of counter in one transaction
// and sets total to the shards' sum, with the bookkeeping at each shard's
// current version, so that events still in flight are neither lost nor
// counted twice: those at or before a shard's version are skipped, later
// ones follow on.
func (a *Applier) Reconcile(ctx context.Context, counter string) (Drift, error) {
	parent := a.layout.Counter(a.client, counter)
	var d Drift
	err := a.client.RunTransaction(ctx, func(ctx context.Context, tx *firestore.Transaction) error {
		snap, err := tx.Get(parent)
		if status.Code(err) == codes.NotFound {
			return ErrNoCounter
		}
		if err != nil {
			return err
		}
		docs, err := tx.Documents(a.layout.Shards(a.client, counter)).GetAll()
		if err != nil {
			return err
		}
		st, err := readParent(snap)
		if err != nil {
			// Unreadable bookkeeping is what reconcile repairs.
			st = parentState{Exists: true, Shards: map[int]applied{}}
			st.Total, _ = snap.Data()[layout.FieldTotal].(int64)
			if n, err := layout.NumShards(snap.Data()); err == nil {
				st.NumShards = int64(n)
			}
		}
		d = Drift{Counter: counter, Total: st.Total, Shards: len(docs), NumShards: int(st.NumShards)}
		fresh := map[int]applied{}
		for _, doc := range docs {
			n, err := strconv.Atoi(doc.Ref.ID)
			if err != nil || strconv.Itoa(n) != doc.Ref.ID || n < 0 {
				continue // not a shard of tally's layout
			}
			c, err := countOf(doc, a.layout.ShardField)
			if err != nil {
				return err
			}
			fresh[n] = applied{Version: precise(doc.UpdateTime), Count: c}
			d.Sum += c
			if d.NumShards > 0 && n >= d.NumShards {
				d.Extra++
			}
		}
		// Shards the bookkeeping knows and that are gone were deleted after
		// their last recorded version.
		for n, old := range st.Shards {
			if _, ok := fresh[n]; !ok {
				v := old.Version
				if !old.Deleted {
					v = v.Add(tombstoneGap)
				}
				fresh[n] = applied{Version: v, Deleted: true}
			}
		}
		d.Drift = d.Total - d.Sum
		entries := make(map[string]any, len(fresh))
		for n, s := range fresh {
			entries[strconv.Itoa(n)] = s.entry()
		}
		return tx.Set(parent, map[string]any{
			layout.FieldTotal:  d.Sum,
			layout.FieldRollup: map[string]any{fieldShards: entries},
		}, firestore.Merge([]string{layout.FieldTotal}, []string{layout.FieldRollup, fieldShards}))
	})
	if err != nil {
		return Drift{}, fmt.Errorf("rollup: reconcile %s: %w", counter, err)
	}
	return d, nil
}
