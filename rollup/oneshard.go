package rollup

import (
	"slices"
	"time"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/fold"
)

// A counter on one shard (most counters: they start on one, and only the
// busy ones grow) is folded with no sum: a write's event carries shard 0's
// counts, which are the whole counts. Nor with a read of the parent, where
// the instance knows it, or where the write is Increment's first after its
// own read of the parent: that write carries the parent's update time as
// read, on which the fold's write compares and sets. A parent that changed
// since (it grew, a fold or the app wrote it) fails the compare-and-set,
// and the fold reads it and goes on as any other.

// eventSum is the sum a held event of c tells, with no read: the latest
// write to shard 0 of a counter on one shard (OneShard), if p, the parent
// the fold will compare-and-set on, had one shard already before it, so
// that shard 0 was the whole count then; a write to a shard of another
// life of the document (one deleted, or created again since) tells
// nothing of this one's. now is the fold's read time.
//
// Its as_of is the write's time, which holds no later write. Where
// several instances fold the same counters (see sharing), only a fold
// within half a window of
// the write takes it; one that waited out the spacing sums instead, so
// that its as_of, the time of its read, holds the writes whose events
// other instances hold too, and they find their events covered rather
// than fold again a window later. Nor while c is measured (see
// measuring): its folds sum, so that it can grow. t.mu is held.
func (t *tracker) eventSum(c *tracked, p core.Parent, now time.Time) (fold.Sum, bool) {
	if t.measuring(c, p) {
		return fold.Sum{}, false
	}
	var best *waiter
	for _, w := range c.waiting {
		if w.one != nil && w.life == p.Life && p.Whole(t.store.Layout(), t.defaults(), w.at) && (best == nil || w.at.After(best.at)) {
			best = w
		}
	}
	if best == nil || t.sharing() && now.Sub(best.at) > t.spacing/2 {
		return fold.Sum{}, false
	}
	s := fold.Sum{At: best.at, Life: best.life, Values: slices.Clone(best.one.Values), Shards: make([]int64, len(best.one.Held))}
	for i, held := range best.one.Held {
		if held {
			s.Shards[i] = 1
		}
	}
	return s, true
}
