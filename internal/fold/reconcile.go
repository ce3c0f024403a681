package fold

import (
	"context"
	"fmt"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/layout"
)

// Reconcile is a fold now: it sets each of id's counts to its shards' sum
// and reports, for each, how far it had drifted from it.
func (f *Folder) Reconcile(ctx context.Context, id string) ([]layout.Drift, error) {
	return f.ReconcileKnown(ctx, id, nil)
}

// ReconcileKnown is Reconcile, from what k knows of id (see FoldKnown).
func (f *Folder) ReconcileKnown(ctx context.Context, id string, k *Known) ([]layout.Drift, error) {
	fold, err := f.FoldKnown(ctx, id, k)
	if err != nil {
		return nil, fmt.Errorf("fold: reconcile %s: %w", id, err)
	}
	counts := f.layout.Counts(id)
	sums := core.WithOwn(fold.Sum.Values, fold.Own)
	out := make([]layout.Drift, len(counts))
	for i, c := range counts {
		d := layout.Drift{Counter: id, Sum: sums[i], Shards: int(fold.Sum.Shards[i]), NumShards: fold.NumShards}
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
		out = append(out, layout.Drift{Counter: id, Field: a.Field, Total: before, Sum: now, Drift: before - now})
	}
	return out, nil
}
