package rollup

import (
	"cmp"
	"context"
	"math"
	"time"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/fold"
)

// GrowPolicy says when the rollup adds shards to a busy counter, and when
// it takes them away from one that went quiet.
type GrowPolicy struct {
	PerShard float64       // writes per second one shard should take; 0 disables growth
	Max      int           // most shards growth leads to
	Period   time.Duration // a rate is measured between two sums at least this far apart; default DefaultGrow.Period
	Default  int           // shards of a counted document without num_shards; default core.DefaultShards
	// Quiet: a counter shrinks when its writes over the last Quiet took a
	// quarter of its shards or less; default DefaultQuiet, at most 50
	// minutes; negative: counters never shrink.
	Quiet time.Duration
}

// DefaultGrow is the growth policy of a deployment that says nothing else
// (TALLY_AUTO_GROW and the TALLY_GROW_* variables): a shard should take one
// write a second, as Firestore sustains on one document, up to 1,000
// shards, which a fold still sums with one read; one whose writes over
// ten minutes took a quarter of its shards or less shrinks.
var DefaultGrow = GrowPolicy{PerShard: 1, Max: 1000, Period: 500 * time.Millisecond, Quiet: DefaultQuiet}

// measureAt is how many events an instance holds for a counter on one
// shard before it measures the counter's rate: its folds then sum the
// shard instead of taking the count from an event, and, while it waits
// for the window, it sums once (a probe) so that the fold has a rate to
// grow by. A counter on one shard with fewer events held is folded from
// them, with no read.
const measureAt = 4

// growTo is the num_shards the fold s of c should write, or 0 to leave it.
// s must be a sum of the shards, never counts an event carried: the rate
// comes from the shards themselves, so no event, forged or not, can make a
// counter grow. The rate is in writes a second: each write of a shard
// counts itself (core.FieldWrites), and the rate is their sum's change
// between s and the sum before it at least a period earlier (c.base),
// whatever amounts they added. A write adds at least 1 to some count or
// takes 1 from it, so only a counter whose counts moved by more than its
// shards take (Σ |Δ| a second, from the sums it has) may need to grow, and
// only then are its writes summed: two reads, at the two sums' read times.
// A counter past PerShard writes a second on each shard grows to the
// shards that rate needs, and at least doubles.
func (t *tracker) growTo(ctx context.Context, c *tracked, p core.Parent, s fold.Sum) int {
	t.mu.Lock()
	base, n := t.mayGrow(c, p, s)
	t.mu.Unlock()
	if n == 0 {
		return 0
	}
	var writes [2]int64
	for i, at := range []time.Time{base.At, s.At} {
		var err error
		if writes[i], err = t.store.SumWrites(ctx, c.id, s.Life, at); err != nil {
			t.log.Warn("rollup: cannot measure the counter's writes; it does not grow now", "counter", c.id, "error", err.Error())
			return 0
		}
	}
	g := t.grow
	rate := float64(writes[1]-writes[0]) / s.At.Sub(base.At).Seconds()
	if rate <= g.PerShard*float64(n) {
		return 0
	}
	return min(g.Max, max(2*n, int(math.Ceil(rate/g.PerShard))))
}

// mayGrow is, when c's counts moved by more than its n shards take a
// second between the base and s (a period apart at least), that base and
// n; else n is 0. It moves the base on to s once a period has passed.
// t.mu is held.
func (t *tracker) mayGrow(c *tracked, p core.Parent, s fold.Sum) (fold.Sum, int) {
	g := t.grow
	n := p.NumShards
	if n == 0 && t.store.Layout().OnDocs() {
		n = cmp.Or(g.Default, core.DefaultShards) // increments use the default on a document without num_shards
	}
	if !g.on() || !p.Exists || n <= 0 || n >= g.Max {
		return fold.Sum{}, 0
	}
	if c.base.At.IsZero() || s.At.Before(c.base.At) || c.base.Life != s.Life {
		c.base = s
		return fold.Sum{}, 0
	}
	base := c.base
	elapsed := s.At.Sub(base.At)
	if elapsed < g.period() {
		return fold.Sum{}, 0
	}
	var moved float64
	for i := range min(len(s.Values), len(base.Values)) {
		moved += math.Abs(float64(s.Values[i] - base.Values[i]))
	}
	c.base = s
	if moved/elapsed.Seconds() <= g.PerShard*float64(n) {
		return fold.Sum{}, 0
	}
	return base, n
}

// on reports whether the policy grows counters at all.
func (g GrowPolicy) on() bool { return g.PerShard > 0 && g.Max > 1 }

// period is the least time between the two sums a rate is measured on.
func (g GrowPolicy) period() time.Duration { return cmp.Or(g.Period, DefaultGrow.Period) }

// measuring reports whether c, on one shard as the fold knows its parent
// p, holds enough events that its folds sum its shard, so that its rate
// is measured. t.mu is held.
func (t *tracker) measuring(c *tracked, p core.Parent) bool {
	return t.grow.on() && c.counting() >= measureAt && p.NumShards < t.grow.Max
}

// needsProbe reports whether c should be summed now, before its fold, so
// that the fold has a rate to grow by: it is measured, and has no sum a
// period old or less to measure from. t.mu is held.
func (t *tracker) needsProbe(c *tracked) bool {
	return t.measuring(c, c.p) && c.p.OneShard(t.store.Layout(), t.defaults()) &&
		(c.base.At.IsZero() || c.p.Now(t.now()).Sub(c.base.At) > t.grow.period())
}

// probe sums c's shards now, writing nothing: the first of the two sums a
// rate is measured between, taken while the fold waits out its spacing.
func (t *tracker) probe(ctx context.Context, c *tracked) error {
	t.mu.Lock()
	at, life := c.p.Now(t.now()).Add(-margin), c.p.Life
	t.mu.Unlock()
	s, err := t.store.SumNow(ctx, c.id, life, at)
	if err != nil {
		return err
	}
	t.mu.Lock()
	if c.base.At.IsZero() || c.base.At.Before(s.At) {
		c.base = s
	}
	t.mu.Unlock()
	return nil
}

// defaults is how many shards a counted document without num_shards has.
func (t *tracker) defaults() int { return cmp.Or(t.grow.Default, core.DefaultShards) }
