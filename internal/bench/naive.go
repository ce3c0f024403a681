package bench

import (
	"context"

	"cloud.google.com/go/firestore"
	"github.com/cloudevents/sdk-go/v2/event"

	"github.com/tallycounters/tally/layout"
	"github.com/tallycounters/tally/rollup"
)

// naiveRollup is the rollup of the public distributed-counter guides: each
// event adds after - before to the parent's total. Nothing is deduplicated,
// and every event is one more write to the parent.
func naiveRollup(client *firestore.Client, l layout.Layout) func(context.Context, event.Event) error {
	dec := rollup.Decoder{Layout: l}
	return func(ctx context.Context, e event.Event) error {
		c, err := dec.Decode(e)
		if err != nil {
			return nil
		}
		delta := c.After.Count - c.Before.Count
		_, err = l.Counter(client, c.Counter).Set(ctx,
			map[string]any{layout.FieldTotal: firestore.Increment(delta)}, firestore.MergeAll)
		return err
	}
}
