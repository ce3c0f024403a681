package rollup

import (
	"context"
	"math/rand/v2"
	"time"
)

// step is what a tracker does next for a counter's waiters.
type step int

const (
	stepRead   step = iota // read the parent, answer what it covers, and fold if it is due (refresh)
	stepFold               // fold on the known view of the parent (foldLatest)
	stepProbe              // sum the shards and write nothing: the first sum a rate is measured from (probe)
	stepStrays             // move what an earlier life took into the document's (moveStrays)
)

func (s step) String() string {
	return [...]string{"read", "fold", "probe", "strays"}[s]
}

// take does the step s for c.
func (t *tracker) take(ctx context.Context, c *tracked, s step) error {
	switch s {
	case stepFold:
		return t.foldLatest(ctx, c)
	case stepProbe:
		return t.probe(ctx, c)
	case stepStrays:
		return t.moveStrays(ctx, c)
	default:
		return t.refresh(ctx, c)
	}
}

// plan says how long to wait, and then what to do, for c's waiters.
//
// A parent whose last write is a fold spacing old or more is due: whichever
// instance holds an event for it folds at once, so that a quiet counter's
// increment shows in its total within one fold, however many instances run.
// It folds on its own view of the parent if that view is fresh (its own
// write, or a read within the spacing), else it reads the parent first: the
// fold's write is a compare-and-set on that view, so a stale one costs a
// wasted sum. A parent written within the spacing by another instance is
// that instance's to fold again when the spacing ends; this one reads the
// parent just after that, and folds itself if nobody did. Only when it holds
// so many events that the leader surely holds some too does it leave the
// leader to fold and read rarely, so that one read answers many events.
// t.mu is held.
func (t *tracker) plan(c *tracked) (time.Duration, step) {
	now := t.now()
	if !c.known {
		return 0, stepRead
	}
	for _, w := range c.waiting {
		if c.stray(w) && !w.moved {
			return 0, stepStrays
		}
	}
	earliest := c.waiting[0].at
	for _, w := range c.waiting {
		if w.at.Before(earliest) {
			earliest = w.at
		}
	}
	serverNow := c.p.Now(now)
	wait := max(earliest.Sub(serverNow)+margin, c.pause.Sub(now)) // a hint dated ahead of this clock
	switch {
	case !c.p.Exists && t.store.Layout().OnDocs():
		// A document the app deleted: read again once the server passed
		// its events, and a creation's by absentLag (it may be one that
		// a read did not show yet).
		for _, w := range c.waiting {
			if w.created {
				wait = max(wait, w.at.Add(absentLag).Sub(serverNow))
			}
		}
		return wait, stepRead
	case !c.p.Exists:
		return wait, stepFold
	}
	due := c.p.Written.Add(t.spacing) // the next fold's read time, at the earliest
	untilDue := due.Sub(serverNow) + margin
	if untilDue > t.grow.period() && t.needsProbe(c) {
		return 0, stepProbe // a busy counter on one shard: the first of two sums to measure its rate by
	}
	return t.planOnView(c, now, wait, untilDue)
}

// planOnView plans a fold of c's counter, which exists, on this
// instance's view of it: fold when its spacing ends (untilDue from now)
// on a view it can trust, else read it, just after another instance's
// fold is due. t.mu is held.
func (t *tracker) planOnView(c *tracked, now time.Time, wait, untilDue time.Duration) (time.Duration, step) {
	age := now.Sub(c.p.AnchorAt) // of this instance's view of the parent
	switch {
	case c.p.Written.Equal(c.mine) && (age < t.spacing+t.spacing/2 || t.trustOldViews()):
		// It leads: fold when the spacing ends. Its view is sure until
		// then (no fold writes within the spacing); later, another
		// instance may have folded, so only a view at most half a window
		// past that is taken, where old views mostly turn out stale.
		return max(wait, untilDue), stepFold
	case c.p.Seen:
		return max(wait, untilDue), stepFold // as an event of a counter on one shard told it: fold on it, with no read, when the spacing ends
	case untilDue <= 0 && (age < t.spacing || t.trustOldViews()):
		return wait, stepFold
	case untilDue <= 0:
		return wait, stepRead // refresh folds, if the parent is still due
	}
	// Another instance wrote the parent within the spacing: check just after
	// its next fold is due (later and at random, so that followers never
	// read all at once), and fold if it did not.
	readAt := now.Add(untilDue)
	if n := len(c.waiting); n >= trustLeader && n < t.confirmBatch {
		readAt = maxTime(readAt, c.read.Add(t.confirmEvery*3/4+rand.N(t.confirmEvery/2+1)))
	}
	readAt = readAt.Add(t.spacing/25 + rand.N(t.spacing/25+1))
	return max(wait, readAt.Sub(now)), stepRead
}
