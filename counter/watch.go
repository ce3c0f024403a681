package counter

import (
	"context"
	"errors"
	"fmt"
	"iter"

	"google.golang.org/api/iterator"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tallycounters/tally/layout"
)

// Watch streams id's total from a realtime listener on the parent: the
// current value first, then each change. A missing counter reads as 0. It
// ends when ctx does (without an error) or when the listener fails.
//
//	for total, err := range c.Watch(ctx, "likes") { ... }
func (c *Client) Watch(ctx context.Context, id string) iter.Seq2[int64, error] {
	return func(yield func(int64, error) bool) {
		it := c.layout.Counter(c.fs, id).Snapshots(ctx)
		defer it.Stop()
		last := int64(-1)
		first := true
		for {
			snap, err := it.Next()
			if ctx.Err() != nil || errors.Is(err, iterator.Done) || status.Code(err) == codes.Canceled {
				return
			}
			if err != nil {
				yield(0, fmt.Errorf("counter: watch %s: %w", id, err))
				return
			}
			var total int64
			if snap.Exists() {
				total, _ = snap.Data()[layout.FieldTotal].(int64)
			}
			if total == last && !first {
				continue // another field changed
			}
			first, last = false, total
			if !yield(total, nil) {
				return
			}
		}
	}
}
