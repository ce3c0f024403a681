package counter

import (
	"context"
	"fmt"
	"time"

	"cloud.google.com/go/firestore"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tallycounters/tally/internal/core"
)

// reshardMargin is added to the cache expiry before shards are removed, for
// increments that read num_shards just before it changed.
const reshardMargin = 2 * time.Second

// WithShardCacheTTL returns a copy of c for a deployment whose Increment
// caches num_shards for d (see Options.ShardCacheTTL).
func (c *Client) WithShardCacheTTL(d time.Duration) *Client {
	cp := *c
	cp.cacheTTL = d
	return &cp
}

// Reshard sets the number of shards of id to n and returns the old number.
// Growing adds shards with count 0. Shrinking first stops new increments from
// picking the shards to be removed: it lowers num_shards, then waits for the
// deployed Increment's cache of num_shards to expire. Then each removed
// shard's count moves into a kept one (shard r into r mod n) in
// transactions, so every snapshot of the shards sums the same, and neither
// Sum nor Total changes. Shrinking to one shard marks the counter
// (resharding) until the moves are done, so that the rollup does not take
// shard 0 for the whole count before it is. An increment that still lands
// on a removed shard re-creates it; Reconcile moves it. Every sum of the
// shards is the same at every step, so a reshard cut off (Ctrl-C, a
// failure) leaves the counts exact; the same reshard run again finishes
// it. wait, if set, hears how long Reshard waits and why.
func (c *Client) Reshard(ctx context.Context, id string, n int, wait func(time.Duration, string)) (old int, err error) {
	if err := c.check(id, n); err != nil {
		return 0, err
	}
	// A counter of the guide layout whose shards have no parent (as
	// Google's samples make them) gets one, holding num_shards.
	life, err := c.life(ctx, id)
	if err != nil {
		return 0, fmt.Errorf("counter: reshard %s: %w", id, err)
	}
	present, err := c.unnumbered(ctx, id, life)
	if err != nil {
		return 0, fmt.Errorf("counter: reshard %s: %w", id, err)
	}
	if old, err = c.setNumShards(ctx, id, n, present); err != nil {
		return 0, fmt.Errorf("counter: reshard %s: %w", id, err)
	}
	if n > old {
		return old, c.createShards(ctx, id, life, old, n)
	}
	if n < old {
		pause := c.cacheTTL + reshardMargin
		if wait != nil {
			wait(pause, fmt.Sprintf("until every Increment instance has seen num_shards %d (its cache of num_shards lasts %v)", n, c.cacheTTL))
		}
		select {
		case <-ctx.Done():
			return old, fmt.Errorf("counter: reshard %s: num_shards is %d, shards not yet moved (run it again to move them): %w", id, n, ctx.Err())
		case <-time.After(pause):
		}
	}
	// Shrinking, or a reshard to the number it has already, which moves
	// what an interrupted one left: shards past n, and the mark of a
	// shrink to one shard.
	extra, err := c.extraShards(ctx, id, life, n)
	if err != nil {
		return old, err
	}
	if err := c.move(ctx, id, life, n, extra); err != nil {
		return old, err
	}
	if n == 1 {
		return old, c.endResharding(ctx, id)
	}
	return old, nil
}

// unnumbered is how many shards id's life has where num_shards does not
// say: one past the highest, as increments spread over them; 0 where it
// does.
func (c *Client) unnumbered(ctx context.Context, id, life string) (int, error) {
	known, err := c.knowsShards(ctx, id)
	if err != nil || known {
		return 0, err
	}
	return c.presentShards(ctx, id, life)
}

// setNumShards sets id's num_shards to n in one transaction, and returns
// the number it had (present, or the default, where it had none). A
// shrink to one shard marks the counter resharding: shard 0 is not yet
// the whole count (see core.Layout.OneShard).
func (c *Client) setNumShards(ctx context.Context, id string, n, present int) (old int, err error) {
	parent := c.layout.Counter(c.fs, id)
	tctx, cancel := c.bound(ctx, 1)
	defer cancel()
	err = c.fs.RunTransaction(tctx, func(ctx context.Context, tx *firestore.Transaction) error {
		snap, err := tx.Get(parent)
		exists := err == nil
		switch {
		case status.Code(err) == codes.NotFound && c.layout.OnDocs():
			return ErrNotFound
		case status.Code(err) == codes.NotFound:
		case err != nil:
			return err
		}
		if exists {
			if old, err = c.layout.NumShards(snap.Data()); err != nil {
				return err
			}
		}
		if old == 0 {
			old = max(present, c.shards) // what Increment uses on a counter without num_shards
		}
		shrinkToOne := n == 1 && old > 1
		if !exists && shrinkToOne {
			return tx.Create(parent, map[string]any{core.FieldNumShards: int64(n), core.FieldResharding: firestore.ServerTimestamp})
		}
		if !exists {
			return tx.Create(parent, map[string]any{core.FieldNumShards: int64(n)})
		}
		guard := any(firestore.Delete)
		if shrinkToOne {
			guard = firestore.ServerTimestamp
		}
		return tx.Update(parent, []firestore.Update{
			{FieldPath: c.layout.NumShardsPath(), Value: int64(n)},
			{FieldPath: c.layout.ReshardingPath(), Value: guard},
		})
	})
	return old, err
}

// endResharding clears the mark that a counter shrinking to one shard holds
// until its other shards are moved into shard 0: from then on, increments
// tell the rollup that shard 0 is the whole count.
func (c *Client) endResharding(ctx context.Context, id string) error {
	wctx, cancel := c.bound(ctx, 1)
	defer cancel()
	_, err := c.layout.Counter(c.fs, id).Update(wctx, []firestore.Update{{FieldPath: c.layout.ReshardingPath(), Value: firestore.Delete}})
	if err != nil {
		return fmt.Errorf("counter: reshard %s: shards moved, but %s is still set: %w", id, core.FieldResharding, err)
	}
	return nil
}

// shrunk reports whether p, as read at its Anchor, is marked resharding
// since long enough that every increment has seen its one shard (the mark
// is older than the shard cache, and a margin): a fold that shrank it to
// one shard, or a Reshard cut off. Its other shards, listed after p was
// read, are then all it will have, and once they are moved into shard 0
// its mark can go (endResharding).
func (c *Client) shrunk(p core.Parent) bool {
	return p.Resharding && !p.ReshardingSince.IsZero() && p.Anchor.Sub(p.ReshardingSince) > c.cacheTTL+reshardMargin
}

// parent reads id's counted document now: not Exists if there is none.
func (c *Client) parent(ctx context.Context, id string) (core.Parent, error) {
	ctx, cancel := c.bound(ctx, 1)
	defer cancel()
	snap, err := c.layout.Counter(c.fs, id).Get(ctx)
	switch {
	case status.Code(err) == codes.NotFound && c.layout.OnDocs():
		return core.Parent{}, ErrNotFound
	case err != nil && status.Code(err) != codes.NotFound:
		return core.Parent{}, err
	}
	return core.ParentFrom(c.layout, id, snap, time.Now()), nil
}

// knowsShards reports whether id's counted document says its num_shards.
func (c *Client) knowsShards(ctx context.Context, id string) (bool, error) {
	ctx, cancel := c.bound(ctx, 1)
	defer cancel()
	snap, err := c.layout.Counter(c.fs, id).Get(ctx)
	if status.Code(err) == codes.NotFound {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	n, err := c.layout.NumShards(snap.Data())
	return n > 0, err
}
