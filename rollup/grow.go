package rollup

import (
	"cmp"
	"math"
	"time"

	"github.com/tallycounters/tally/layout"
	"github.com/tallycounters/tally/rollup/fold"
)

// GrowPolicy says when the rollup adds shards to a busy counter. It never
// removes any.
type GrowPolicy struct {
	PerShard float64       // writes per second one shard should take; 0 disables growth
	Max      int           // most shards growth leads to
	Period   time.Duration // rates are measured over at least this long; default 10s
	Default  int           // shards of a counted document without num_shards; default layout.DefaultShards
}

// growTo is the num_shards the fold s of c should write, or 0 to leave it.
// The rate is the counter's net rate, Σ |Δ sum| over its counts / Δ read
// time, between this
// fold and one at least a period earlier: it comes from the shards
// themselves, so no event, forged or not, can make a counter grow.
func (t *Tracker) growTo(c *tracked, p fold.Parent, s Sum) int {
	g := t.grow
	n := p.NumShards
	if n == 0 && t.folder.Layout().OnDocs() {
		n = cmp.Or(g.Default, layout.DefaultShards) // increments use the default on a document without num_shards
	}
	if g.PerShard <= 0 || !p.Exists || n <= 0 || n >= g.Max {
		return 0
	}
	period := g.Period
	if period <= 0 {
		period = 10 * time.Second
	}
	if c.base.At.IsZero() || s.At.Before(c.base.At) {
		c.base = s
		return 0
	}
	elapsed := s.At.Sub(c.base.At)
	if elapsed < period {
		return 0
	}
	var moved float64
	for i := range min(len(s.Values), len(c.base.Values)) {
		moved += math.Abs(float64(s.Values[i] - c.base.Values[i]))
	}
	rate := moved / elapsed.Seconds()
	c.base = s
	if rate <= g.PerShard*float64(n) {
		return 0
	}
	return min(g.Max, max(2*n, int(math.Ceil(rate/g.PerShard))))
}
