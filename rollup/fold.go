package rollup

import (
	"context"
	"errors"
	"time"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/core/aggregate"
	"github.com/tallycounters/tally/internal/fold"
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
		(!p.Exists && !t.store.Layout().OnDocs() || p.Exists && !p.Anchor.Before(p.Written.Add(t.spacing)))
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
// sum from an event held (see eventSum), gathers what the fold takes beside
// it (fold.Folder.Gather), and writes that onto p. If p turns out stale
// (someone wrote the parent since), it reads the parent and, if events are
// still held that the parent does not cover, writes the same sum onto it,
// if that is still a fold's to write (a sum from an event only while the
// parent still has one shard since before it; else it sums the shards);
// else it leaves c's waiters to plan again.
func (t *tracker) fold(ctx context.Context, c *tracked, p core.Parent, at time.Time) error {
	st, err := t.start(ctx, c, p, at)
	if err == nil {
		err = t.store.Gather(ctx, c.id, st.p, &st.s, st.children, st.partsAt, t.now())
	}
	if err != nil {
		return err
	}
	for shard, why := range st.s.Skipped {
		t.log.Warn("rollup: a shard's count cannot be added: the fold skips it, and counts the others",
			"counter", c.id, "shard", shard, "reason", why)
	}
	st.s.Weigh = t.weighAt(c, st.s.At)
	return t.write(ctx, c, st)
}

// foldStart is what a fold of c starts from: the parent as known, the
// children and whether the counts are to be folded (wanted), the sum and
// whether it is an event's, the time the fold is at, and the read time of
// its parts.
type foldStart struct {
	p           core.Parent
	children    []aggregate.Child
	counts      bool
	s           fold.Sum
	fromEvent   bool
	at, partsAt time.Time
}

// start chooses the sum a fold of c on p at at starts from: none if the
// counts are not wanted, 0 each for a document just created, an event's,
// or the shards' sum now. A parent known only from an event is read
// first, as a fold on it needs its counts.
func (t *tracker) start(ctx context.Context, c *tracked, p core.Parent, at time.Time) (foldStart, error) {
	st := foldStart{p: p, at: at}
	t.mu.Lock()
	st.children, st.counts = t.wanted(c)
	st.s, st.fromEvent = t.eventSumOf(c, st)
	t.mu.Unlock()
	var err error
	if !st.fromEvent && p.Seen {
		if st.p, err = t.store.Read(ctx, c.id); err != nil {
			return st, err
		}
		t.mu.Lock()
		c.p, c.read = st.p, t.now()
		st.at = maxTime(st.at, st.p.Anchor)
		st.s, st.fromEvent = t.eventSumOf(c, st)
		t.mu.Unlock()
	}
	st.partsAt = st.at
	switch zero, ok := t.createdSum(c, st.p); {
	case !st.counts:
		st.s = fold.Sum{At: core.Precise(st.at), Life: st.p.Life}
	case ok && !st.fromEvent:
		st.s = zero
	case !st.fromEvent:
		st.s, err = t.store.SumNow(ctx, c.id, st.p.Life, st.at)
		st.partsAt = st.s.At
	default:
		st.partsAt = st.s.At
	}
	return st, err
}

// eventSumOf is the sum an event held gives a fold that starts from st:
// children are aggregated at a read time of now, so the counts then are
// summed at it too, not taken from an event. t.mu is held.
func (t *tracker) eventSumOf(c *tracked, st foldStart) (fold.Sum, bool) {
	s, ok := t.eventSum(c, st.p, st.at)
	return s, ok && len(st.children) == 0
}

// write writes the fold st, and once more if the parent turns out stale
// and a fold is still to be written (afterStale).
func (t *tracker) write(ctx context.Context, c *tracked, st foldStart) error {
	optimistic := t.now().Sub(st.p.AnchorAt) >= t.spacing // a view this old may be stale
	for attempt := 0; ; attempt++ {
		shards := 0
		if !st.fromEvent && st.counts { // growth follows the shards' sums, never an event's counts
			if shards = t.growTo(ctx, c, st.p, st.s); shards == 0 {
				shards = t.shrinkTo(ctx, c, st.p, st.s)
			}
		}
		wrote, next, err := t.store.Write(ctx, c.id, st.p, st.s, shards)
		t.noteWrite(c, st.p, err, optimistic && attempt == 0)
		if err == nil && t.moved != nil {
			t.moved(wrote.Moves, wrote.Updated)
		}
		if !errors.Is(err, fold.ErrStale) || attempt > 0 {
			return t.finish(c, st.at, st.s, wrote, next, err)
		}
		if again, err := t.afterStale(ctx, c, &st); !again || err != nil {
			return err
		}
	}
}

// noteWrite notes what a write on p found: on an old view (first), whether
// it was stale; on this instance's own last write, whether another writer
// came between.
func (t *tracker) noteWrite(c *tracked, p core.Parent, err error, first bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if first {
		t.noteView(errors.Is(err, fold.ErrStale))
	}
	if !c.mine.IsZero() && p.Written.Equal(c.mine) && (err == nil || errors.Is(err, fold.ErrStale)) {
		t.noteShared(err != nil)
	}
}

// afterStale reads the parent again after a write found it stale, and
// says whether the fold st is still to be written onto it (again), with
// the shards summed anew if the event's counts are no longer the whole
// counts.
func (t *tracker) afterStale(ctx context.Context, c *tracked, st *foldStart) (again bool, err error) {
	p, err := t.store.Read(ctx, c.id)
	if err != nil {
		return false, err
	}
	st.p = p
	t.mu.Lock()
	t.noteRead(c, p)
	c.p, c.known, c.read = p, true, t.now()
	t.settle(c)
	idle := len(c.waiting) == 0
	t.mu.Unlock()
	switch {
	case !p.Exists:
		return false, nil // deleted since: a sum from before must not bring it back
	case idle:
		return false, nil // the write that made it stale covered every event held
	case p.Life != st.s.Life:
		return false, nil // created again since: its shards and parts are another life's; plan again on it
	case st.fromEvent && !p.Whole(t.store.Layout(), t.defaults(), st.s.At):
		parts := st.s.Parts
		if st.s, err = t.store.SumNow(ctx, c.id, p.Life, p.Anchor); err != nil {
			return false, err
		}
		st.s.Parts, st.fromEvent = parts, false
	}
	return true, nil
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
func (t *tracker) createdSum(c *tracked, p core.Parent) (fold.Sum, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !p.Exists || !p.AsOf.IsZero() {
		return fold.Sum{}, false
	}
	var at time.Time
	for _, w := range c.waiting {
		switch {
		case c.known && c.covers(w), w.child != nil:
		case !w.created || w.life != p.Life:
			return fold.Sum{}, false // an increment's event, or another life's creation
		default:
			at = maxTime(at, w.at)
		}
	}
	if at.IsZero() {
		return fold.Sum{}, false
	}
	n := len(t.store.Layout().Counts(c.id))
	return fold.Sum{At: core.Precise(at), Life: p.Life, Values: make([]int64, n), Shards: make([]int64, n)}, true
}

// finish records what the write of a fold did, and answers the waiters it
// covers.
func (t *tracker) finish(c *tracked, at time.Time, s fold.Sum, wrote fold.Outcome, next core.Parent, err error) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case errors.Is(err, fold.ErrStale):
		c.known = false
		return nil
	case errors.Is(err, fold.ErrTooSoon):
		return nil // another instance folded meanwhile: plan again
	case errors.Is(err, fold.ErrNoShardField):
		t.log.Error("rollup: cannot fold: is the shard field right? nothing written", "counter", c.id, "error", err.Error())
		c.pause = t.now().Add(t.spacing)
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
	info := infoOf(wrote, covered)
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
func (t *tracker) wanted(c *tracked) (children []aggregate.Child, counts bool) {
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
			children = append(children, aggregate.Child{Source: k.source, ID: k.id, At: w.at})
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
	if info.Shrank {
		t.log.Info("rollup: took shards from a quiet counter; Reconcile moves their counts", "counter", info.Counter, "num_shards", info.NumShards)
	}
	if !info.Wrote {
		return
	}
	attrs := []any{"counter", info.Counter, "lag_ms", info.Lag.Milliseconds(), "events", info.Covered}
	if info.Totals != nil {
		attrs = append(attrs, "shards", info.Shards, "totals", info.Totals)
	}
	if info.Parts > 0 {
		attrs = append(attrs, "parts", info.Parts, "aggregates", info.Aggregates)
	}
	t.log.Info("rollup: fold", append(attrs, "as_of", info.AsOf.Format(time.RFC3339Nano))...)
}
