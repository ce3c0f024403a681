package counter

import (
	"context"
	"fmt"
	"time"

	"cloud.google.com/go/firestore"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tallycounters/tally/layout"
)

// reshardMargin is added to the cache expiry before shards are removed, for
// increments that read num_shards just before it changed.
const reshardMargin = 2 * time.Second

// Reshard sets the number of shards of id to n and returns the old number.
// Growing adds shards with count 0. Shrinking first stops new increments from
// picking the shards to be removed: it lowers num_shards, then waits for the
// deployed Increment's cache of num_shards to expire. Then the removed
// shards' counts move into kept ones (shard r into r mod n) in transactions
// that also keep the total where it was, so neither Sum nor Total changes.
// An increment racing the move is either moved with it or re-creates its
// shard, which Reconcile moves.
func (c *Client) Reshard(ctx context.Context, id string, n int) (old int, err error) {
	if err := check(id, n); err != nil {
		return 0, err
	}
	parent := c.layout.Counter(c.fs, id)
	err = c.fs.RunTransaction(ctx, func(ctx context.Context, tx *firestore.Transaction) error {
		snap, err := tx.Get(parent)
		if status.Code(err) == codes.NotFound {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		if old, err = layout.NumShards(snap.Data()); err != nil {
			return err
		}
		return tx.Update(parent, []firestore.Update{{Path: layout.FieldNumShards, Value: int64(n)}})
	})
	if err != nil {
		return 0, fmt.Errorf("counter: reshard %s: %w", id, err)
	}
	if n >= old {
		return old, c.createShards(ctx, id, old, n)
	}
	select {
	case <-ctx.Done():
		return old, fmt.Errorf("counter: reshard %s: num_shards is %d, shards not yet moved: %w", id, n, ctx.Err())
	case <-time.After(c.cacheTTL + reshardMargin):
	}
	if _, err := c.fold(ctx, id, n); err != nil {
		return old, err
	}
	return old, nil
}

// fold moves every shard of id numbered n or more into the kept ones.
func (c *Client) fold(ctx context.Context, id string, n int) (int, error) {
	moved, err := c.applier.Fold(ctx, id, n)
	if err != nil {
		return moved, fmt.Errorf("counter: %w", err)
	}
	return moved, nil
}
