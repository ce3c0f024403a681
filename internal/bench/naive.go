package bench

import (
	"context"
	"time"

	"cloud.google.com/go/firestore"
	"github.com/cloudevents/sdk-go/v2/event"

	"github.com/tallycounters/tally/layout"
	"github.com/tallycounters/tally/rollup"
)

// naiveRollup is the rollup of the public distributed-counter guides: each
// event adds after - before to the parent's total. Nothing is deduplicated,
// and every event is one more write to the parent.
// Each parent write is reported to record.
func naiveRollup(client *firestore.Client, l layout.Layout, record func(path string, at time.Time, delta int64)) func(context.Context, event.Event) error {
	dec := rollup.Decoder{Layout: l}
	return func(ctx context.Context, e event.Event) error {
		c, err := dec.Decode(e)
		if err != nil {
			return nil
		}
		delta := c.After.Count - c.Before.Count
		ref := l.Counter(client, c.Counter)
		wr, err := ref.Set(ctx, map[string]any{layout.FieldTotal: firestore.Increment(delta)}, firestore.MergeAll)
		if err != nil {
			return err
		}
		record(l.Collection+"/"+c.Counter, wr.UpdateTime, delta)
		return nil
	}
}
