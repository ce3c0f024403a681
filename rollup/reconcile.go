package rollup

import (
	"context"
	"fmt"
)

// Drift is what a reconcile found and repaired.
type Drift struct {
	Counter string `json:"counter"`
	Total   int64  `json:"total"`  // the parent's total before
	Sum     int64  `json:"sum"`    // the shards' sum, now also the total
	Drift   int64  `json:"drift"`  // Total - Sum
	Shards  int    `json:"shards"` // shard documents summed

	// Extra is how many of them are numbered past num_shards (left by an
	// increment that raced a reshard); NumShards is num_shards, 0 if unset.
	Extra     int `json:"extra_shards"`
	NumShards int `json:"num_shards"`
}

// Reconcile is a fold now: it sets id's total to its shards' sum and
// reports how far the total had drifted from it.
func (f *Folder) Reconcile(ctx context.Context, id string) (Drift, error) {
	fold, err := f.Fold(ctx, id)
	if err != nil {
		return Drift{}, fmt.Errorf("rollup: reconcile %s: %w", id, err)
	}
	return Drift{
		Counter: id, Total: fold.Before, Sum: fold.Sum.Value, Drift: fold.Before - fold.Sum.Value,
		Shards: int(fold.Sum.Shards), NumShards: fold.NumShards,
	}, nil
}
