package fold

import (
	"context"
	"fmt"

	"github.com/tallycounters/tally/internal/core"
)

// Drift is what a reconcile found and repaired, for one count.
type Drift struct {
	Counter string `json:"counter"`
	Field   string `json:"field,omitempty"` // the count, on documents
	Total   int64  `json:"total"`           // the count before
	Sum     int64  `json:"sum"`             // the shards' sum and the document's own part (core/own.go), now also the count
	Drift   int64  `json:"drift"`           // Total - Sum
	Shards  int    `json:"shards"`          // shard documents summed

	// Extra is how many of them are numbered past num_shards (left by an
	// increment that raced a reshard); NumShards is num_shards, 0 if unset.
	Extra     int `json:"extra_shards"`
	NumShards int `json:"num_shards"`
}

// Reconcile is a fold now: it sets each of id's counts to its shards' sum
// and reports, for each, how far it had drifted from it.
func (f *Folder) Reconcile(ctx context.Context, id string) ([]Drift, error) {
	return f.ReconcileKnown(ctx, id, nil)
}

// ReconcileKnown is Reconcile, from what k knows of id (see FoldKnown).
func (f *Folder) ReconcileKnown(ctx context.Context, id string, k *Known) ([]Drift, error) {
	fold, err := f.FoldKnown(ctx, id, k)
	if err != nil {
		return nil, fmt.Errorf("fold: reconcile %s: %w", id, err)
	}
	counts := f.layout.Counts(id)
	sums := core.WithOwn(fold.Sum.Values, fold.Own)
	out := make([]Drift, len(counts))
	for i, c := range counts {
		d := Drift{Counter: id, Sum: sums[i], Shards: int(fold.Sum.Shards[i]), NumShards: fold.NumShards}
		if i < len(fold.Before) {
			d.Total = fold.Before[i]
		}
		if f.layout.OnDocs() {
			d.Field = c.Field
			if d.Shards == 0 {
				d.Sum = d.Total // no shard holds it: the count stays as it is
			}
		}
		d.Drift = d.Total - d.Sum
		out[i] = d
	}
	for _, a := range f.layout.Aggregates(id) {
		// An aggregate whose values are whole numbers: how far the
		// document's value had drifted from the children's.
		now, ok := fold.Aggregates[a.Field].(int64)
		if !ok {
			continue
		}
		before, _ := fold.AggregatesBefore[a.Field].(int64)
		out = append(out, Drift{Counter: id, Field: a.Field, Total: before, Sum: now, Drift: before - now})
	}
	return out, nil
}
