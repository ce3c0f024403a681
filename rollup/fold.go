package rollup

import (
	"context"
	"errors"
	"time"

	"github.com/tallycounters/tally/core"
)

// refresh reads the parent, answers what it covers, and folds at once if the
// parent is due.
func (t *tracker) refresh(ctx context.Context, c *tracked) error {
	p, err := t.store.Read(ctx, c.id)
	if err != nil {
		return err
	}
	t.mu.Lock()
	t.noteRead(c, p)
	c.p, c.known, c.read = p, true, t.now()
	t.settle(c)
	due := len(c.waiting) > 0 && t.now().After(c.pause) &&
		(!p.Exists && !t.store.Layout().OnDocs() || p.Exists && !p.Anchor.Before(p.Written.Add(t.window)))
	t.mu.Unlock()
	if !due {
		return nil
	}
	return t.fold(ctx, c, p, p.Anchor)
}

// foldLatest folds on the known view of the parent at the latest time the
// server has certainly passed.
func (t *tracker) foldLatest(ctx context.Context, c *tracked) error {
	t.mu.Lock()
	p, at := c.p, c.p.Now(t.now()).Add(-margin)
	t.mu.Unlock()
	return t.fold(ctx, c, p, at)
}

// fold sums c's shards now, at a read time no earlier than at, or takes the
// sum from an event held (see eventSum), and writes that onto p. If p turns
// out stale (someone wrote the parent since), it reads the parent and, if
// events are still held that the parent does not cover, writes the same sum
// onto it, if that is still a fold's to write (a sum from an event only
// while the parent still has one shard since before it; else it sums the
// shards); else it leaves c's waiters to plan again.
func (t *tracker) fold(ctx context.Context, c *tracked, p core.Parent, at time.Time) error {
	t.mu.Lock()
	children, counts := t.wanted(c)
	// Children are aggregated at a read time of now; the counts then are
	// summed at it too, not taken from an event. t.mu is held.
	eventSum := func() (core.Sum, bool) {
		s, ok := t.eventSum(c, p, at)
		return s, ok && len(children) == 0
	}
	s, fromEvent := eventSum()
	t.mu.Unlock()
	var err error
	if !fromEvent && p.Seen {
		// An event's word on the parent, with no sum to go with it: read
		// the parent, as a fold on it needs its counts.
		if p, err = t.store.Read(ctx, c.id); err != nil {
			return err
		}
		t.mu.Lock()
		c.p, c.read = p, t.now()
		at = maxTime(at, p.Anchor)
		s, fromEvent = eventSum()
		t.mu.Unlock()
	}
	partsAt := at
	switch zero, ok := t.createdSum(c, p); {
	case !counts:
		s = core.Sum{At: core.Precise(at), Life: p.Life}
	case ok && !fromEvent:
		s = zero
	case !fromEvent:
		s, err = t.store.SumNow(ctx, c.id, p.Life, at)
		partsAt = s.At
	default:
		partsAt = s.At
	}
	if err == nil && s.Values != nil {
		err = t.store.ReadBoundaries(ctx, c.id, p, &s, t.now())
	}
	if err == nil && len(children) > 0 {
		s.Parts, err = t.store.SumParts(ctx, c.id, p, children, partsAt)
	}
	if errors.Is(err, core.ErrSumNotInteger) {
		t.log.Error("rollup: cannot fold: the sum of the shards is not an int64; nothing written",
			"counter", c.id, "error", err.Error())
		t.mu.Lock()
		c.pause = t.now().Add(t.window)
		t.answer(c, at, nil)
		t.mu.Unlock()
		return nil
	}
	if err != nil {
		return err
	}
	s.Weigh = t.weighAt(c, s.At)
	optimistic := t.now().Sub(p.AnchorAt) >= t.window // a view this old may be stale
	for attempt := 0; ; attempt++ {
		grow := 0
		if !fromEvent && counts { // growth follows the shards' sums, never an event's counts
			t.mu.Lock()
			grow = t.growTo(c, p, s)
			t.mu.Unlock()
		}
		wrote, next, err := t.store.Write(ctx, c.id, p, s, grow)
		t.mu.Lock()
		if optimistic && attempt == 0 {
			t.noteView(errors.Is(err, core.ErrStale))
		}
		if !c.mine.IsZero() && p.Written.Equal(c.mine) && (err == nil || errors.Is(err, core.ErrStale)) {
			t.noteShared(err != nil) // on its own last write: did another writer come between?
		}
		t.mu.Unlock()
		if errors.Is(err, core.ErrStale) && attempt == 0 {
			if p, err = t.store.Read(ctx, c.id); err != nil {
				return err
			}
			t.mu.Lock()
			t.noteRead(c, p)
			c.p, c.known, c.read = p, true, t.now()
			t.settle(c)
			idle := len(c.waiting) == 0
			t.mu.Unlock()
			switch {
			case !p.Exists:
				return nil // deleted since: a sum from before must not bring it back
			case idle:
				return nil // the write that made it stale covered every event held
			case p.Life != s.Life:
				return nil // created again since: its shards and parts are another life's; plan again on it
			case fromEvent && !p.Whole(t.store.Layout(), t.defaults(), s.At):
				// The event's counts are no longer the whole counts: sum
				// the shards.
				parts := s.Parts
				if s, err = t.store.SumNow(ctx, c.id, p.Life, p.Anchor); err != nil {
					return err
				}
				s.Parts, fromEvent = parts, false
			}
			continue
		}
		return t.finish(c, at, s, wrote, next, err)
	}
}

// weighAt is the mean commit time of the increments' events that c holds
// and a sum at at covers: the instant a trend weighs the fold's change at,
// so that a fold long after its increments (a busy instance's) weighs
// them about when they were made. Zero if none; the fold keeps it within
// its last fold and at, whatever an event says. t.mu is not held.
func (t *tracker) weighAt(c *tracked, at time.Time) time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	var before float64 // mean of at - each event's time, in seconds
	n := 0
	for _, w := range c.waiting {
		if w.child == nil && !w.created && !w.at.After(at) {
			n++
			before += (at.Sub(w.at).Seconds() - before) / float64(n)
		}
	}
	if n == 0 {
		return time.Time{}
	}
	return at.Add(-time.Duration(before * float64(time.Second)))
}

// createdSum is the counts of a document just created, with no read: 0
// each, as of its creation. No shard of a life is written at or before
// the life begins (an increment learns the life by reading the document
// after it was created), so that sum is exact. It is taken only when the
// events held that want counts are all of the creation of p's life, and p
// holds none yet. t.mu is not held.
func (t *tracker) createdSum(c *tracked, p core.Parent) (core.Sum, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !p.Exists || !p.AsOf.IsZero() {
		return core.Sum{}, false
	}
	var at time.Time
	for _, w := range c.waiting {
		switch {
		case c.known && c.covers(w), w.child != nil:
		case !w.created || w.life != p.Life:
			return core.Sum{}, false // an increment's event, or another life's creation
		default:
			at = maxTime(at, w.at)
		}
	}
	if at.IsZero() {
		return core.Sum{}, false
	}
	n := len(t.store.Layout().Counts(c.id))
	return core.Sum{At: core.Precise(at), Life: p.Life, Values: make([]int64, n), Shards: make([]int64, n)}, true
}

// finish records what the write of a fold did, and answers the waiters it
// covers.
func (t *tracker) finish(c *tracked, at time.Time, s core.Sum, wrote core.Outcome, next core.Parent, err error) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case errors.Is(err, core.ErrStale):
		c.known = false
		return nil
	case errors.Is(err, core.ErrTooSoon):
		return nil // another instance folded meanwhile: plan again
	case errors.Is(err, core.ErrNoShardField):
		t.log.Error("rollup: cannot fold: is the shard field right? nothing written", "counter", c.id, "error", err.Error())
		c.pause = t.now().Add(t.window)
		t.answer(c, at, nil)
		return nil
	case err != nil:
		return err
	}
	c.p = next
	if wrote.Wrote {
		c.mine = wrote.Updated
	}
	for _, ch := range wrote.Children {
		if c.childAt == nil {
			c.childAt = map[childKey]time.Time{}
		}
		c.childAt[childKey{ch.Source, ch.ID}] = ch.At
	}
	for _, fl := range wrote.Failed {
		t.log.Error("rollup: cannot fold an aggregate: Firestore refuses its query; it keeps its value, and the document's other counts are written",
			"counter", c.id, "aggregate", fl.Field, "error", fl.Err.Error())
	}
	if len(wrote.Unread) > 0 { // reported: never a guess passed off as a count
		t.log.Warn("rollup: windows may hold increments of earlier buckets: the counts changed since the last fold, and could not be read at these bucket starts, past Firestore's retention; what came before them since the last fold is counted after them",
			"counter", c.id, "boundaries", wrote.Unread)
	}
	covered, oldest := c.coveredBy()
	info := FoldInfo{Outcome: wrote, Covered: covered}
	if wrote.Wrote && covered > 0 {
		info.Lag = wrote.Updated.Sub(oldest)
	}
	t.logFold(info) // first: whoever sees an event answered can see the fold that answered it
	t.settle(c)
	return nil
}

// wanted is what a fold of c must refold for its waiters that the known
// parent does not cover: the children of aggregated collections, and
// whether the counts too. t.mu is held.
func (t *tracker) wanted(c *tracked) (children []core.Child, counts bool) {
	at := map[childKey]int{}
	for _, w := range c.waiting {
		switch {
		case c.known && c.covers(w):
		case w.created:
			counts = counts || len(c.layout.Counts(c.id)) > 0
			for _, u := range c.layout.Unfolded(c.id, c.p) {
				k := childKey{u.Source, ""}
				if _, ok := at[k]; !ok {
					at[k] = len(children)
					children = append(children, u)
				}
			}
		case w.child != nil:
			k := childKey{w.child.Source, w.child.ID}
			if i, ok := at[k]; ok {
				children[i].At = maxTime(children[i].At, w.at)
				continue
			}
			at[k] = len(children)
			children = append(children, core.Child{Source: k.source, ID: k.id, At: w.at})
		default:
			counts = true
		}
	}
	return children, counts
}

// answer answers c's waiters that at covers with err. t.mu is held.
func (t *tracker) answer(c *tracked, at time.Time, err error) {
	kept := c.waiting[:0]
	for _, w := range c.waiting {
		if w.at.After(at) {
			kept = append(kept, w)
			continue
		}
		w.done <- err
	}
	clear(c.waiting[len(kept):])
	c.waiting = kept
}

// coveredBy says how many of c's waiters the known parent covers, and
// the oldest of them. t.mu is held.
func (c *tracked) coveredBy() (n int, oldest time.Time) {
	for _, w := range c.waiting {
		if !c.covers(w) {
			continue
		}
		if n == 0 || w.at.Before(oldest) {
			oldest = w.at
		}
		n++
	}
	return n, oldest
}

func (t *tracker) logFold(info FoldInfo) {
	if t.onFold != nil {
		t.onFold(info)
	}
	if info.Grew {
		t.log.Info("rollup: added shards to a busy counter", "counter", info.Counter, "num_shards", info.NumShards)
	}
	if !info.Wrote {
		return
	}
	attrs := []any{"counter", info.Counter, "lag_ms", info.Lag.Milliseconds(), "events", info.Covered}
	if info.Sum.Values != nil {
		attrs = append(attrs, "shards", info.Sum.Shards, "totals", info.Sum.Values)
	}
	if info.Parts > 0 {
		attrs = append(attrs, "parts", info.Parts, "aggregates", info.Aggregates)
	}
	t.log.Info("rollup: fold", append(attrs, "as_of", info.Sum.At.Format(time.RFC3339Nano))...)
}
