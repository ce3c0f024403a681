package rollup

import (
	"context"
	"math"
	"time"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/fold"
)

// DefaultQuiet is how long a counter's writes are measured over before it
// shrinks (GrowPolicy.Quiet): long enough that a counter between bursts
// keeps its shards, short enough that one that went quiet soon folds with
// no read again.
const DefaultQuiet = 10 * time.Minute

// maxQuiet is the longest Quiet: a rate over it is summed at a read time
// that long ago, and Firestore keeps versions for an hour.
const maxQuiet = 50 * time.Minute

// shrinkTo is the num_shards the fold s of c should write to shrink, or 0
// to leave it: a counter with more shards than a new one has whose writes
// over the last Quiet took at most a quarter of them (at PerShard writes a
// second each) shrinks to twice the shards its rate needs, or to the
// default; growth then needs a rate twice as high as the one it shrank
// at, so a counter does not swing. The rate is measured at most once a
// Quiet for a counter by an instance, and only once the instance has known
// it with n shards for a Quiet (a counter made with many shards, or just
// grown, keeps them that long at least): two sums of its writes, at s's
// read time and a Quiet before it. Fewer shards are safe at once: every fold
// sums all shards that hold something, whatever num_shards says; shards
// past it are moved into the kept ones by Reconcile, and a counter that
// shrinks to one shard is marked resharding until they are, so that no
// fold takes shard 0 for the whole count before it is.
func (t *tracker) shrinkTo(ctx context.Context, c *tracked, p core.Parent, s fold.Sum) int {
	g := t.grow
	floor, n := t.defaults(), p.NumShards
	if !g.on() || g.quiet() <= 0 || !p.Exists || n <= floor {
		return 0
	}
	t.mu.Lock()
	if c.shrinkAt.IsZero() || c.shrinkN != n {
		c.shrinkAt, c.shrinkN = s.At, n // seen with n shards from now on
	}
	due := s.At.Sub(c.shrinkAt) >= g.quiet()
	if due {
		c.shrinkAt = s.At
	}
	t.mu.Unlock()
	if !due {
		return 0
	}
	var writes [2]int64
	for i, at := range []time.Time{s.At.Add(-g.quiet()), s.At} {
		var err error
		if writes[i], err = t.store.SumWrites(ctx, c.id, s.Life, at); err != nil {
			t.log.Warn("rollup: cannot measure the counter's writes; it does not shrink now", "counter", c.id, "error", err.Error())
			return 0
		}
	}
	rate := float64(writes[1]-writes[0]) / g.quiet().Seconds()
	m := max(floor, int(math.Ceil(2*rate/g.PerShard)))
	if 2*m > n {
		return 0
	}
	return m
}

// quiet is how long a counter's writes are measured over before it
// shrinks; 0 or less: never.
func (g GrowPolicy) quiet() time.Duration {
	if g.Quiet == 0 {
		return DefaultQuiet
	}
	return min(g.Quiet, maxQuiet)
}
