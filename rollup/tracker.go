package rollup

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/core/aggregate"
	"github.com/tallycounters/tally/internal/core/rank"
	"github.com/tallycounters/tally/internal/fold"
	"github.com/tallycounters/tally/internal/fsrpc"
)

// tracker holds the hints given to one instance until a fold covers them,
// and folds when it must (see plan). A parent not written for a window is
// folded at once by whichever instance holds a hint for it. Per counter, the
// instance whose fold wrote the parent last leads: it folds again as soon
// as the fold spacing allows, with one aggregation read and no other. The others
// follow: each reads the parent just after the leader's next fold is due,
// and folds if the leader did not; one that holds many hints trusts the
// leader and reads only once it holds confirmBatch hints, or confirmEvery
// after its last read, so that a read amortizes over many hints. Hints that
// the last known as_of covers (duplicates, late deliveries) are answered at
// once, with no read.
type tracker struct {
	store        store
	now          func() time.Time // the local clock
	spacing      time.Duration
	grow         GrowPolicy
	confirmEvery time.Duration
	confirmBatch int
	log          *slog.Logger
	onFold       func(FoldInfo)
	moved        func([]*rank.Move, time.Time) // told each fold's moves between cells, and its commit time
	foldBound    time.Duration                 // bounds one fold's reads and write; a test on a slow emulator raises it

	mu         sync.Mutex
	counters   map[string]*tracked
	staleViews float64 // moving share of folds on old views that found them stale
	shared     float64 // moving share of reads and writes of parents this instance wrote last that found another's write since
}

// store is what a tracker reads and writes counters with: a
// *fold.Folder, or, in tests of the tracker's decisions, a fake.
type store interface {
	Layout() core.Layout
	Spacing() time.Duration
	Read(ctx context.Context, id string) (core.Parent, error)
	SumNow(ctx context.Context, id, life string, notBefore time.Time) (fold.Sum, error)
	Gather(ctx context.Context, id string, p core.Parent, s *fold.Sum, children []aggregate.Child, partsAt, now time.Time) error
	Write(ctx context.Context, id string, p core.Parent, s fold.Sum, shards int) (fold.Outcome, core.Parent, error)
	// SumWrites sums the writes of the shards of id's life at the read
	// time at (core.FieldWrites).
	SumWrites(ctx context.Context, id, life string, at time.Time) (int64, error)
	// MoveStrays moves into the life the document id has now what its
	// earlier life took after that one began (package lives).
	MoveStrays(ctx context.Context, id, from string, after time.Time) (map[string]int64, error)
}

// FoldInfo is what one fold this handler made did, for Config.OnFold.
type FoldInfo struct {
	Counter string    // the counted document's name
	Wrote   bool      // false: the document held this fold or a later one already
	Updated time.Time // the write's commit time
	// AsOf is the read time of the counts the fold summed, Totals each
	// count then (its shards' sum, and what the document keeps of it
	// itself: core/own.go; in the order TALLY_COUNTS declares them) and
	// Shards the shard documents summed for each; Totals is nil if the
	// fold did not sum the counts.
	AsOf      time.Time
	Totals    []int64
	Shards    []int64
	NumShards int  // num_shards after the write
	Grew      bool // num_shards was raised in this write
	Shrank    bool // num_shards was lowered in this write
	// Parts is how many parts of aggregated collections the fold
	// refolded, Ranges the first and last child id of each it summed, and
	// Aggregates each aggregate's value after the write.
	Parts      int
	Ranges     [][2]string
	Aggregates map[string]any
	Moves      int           // moves between a board's cells committed with the write
	Covered    int           // events this fold answered on this instance
	Lag        time.Duration // from the oldest of those events' writes to the fold's commit
}

// infoOf is what the fold out did, having answered covered events.
func infoOf(out fold.Outcome, covered int) FoldInfo {
	info := FoldInfo{Counter: out.Counter, Wrote: out.Wrote, Updated: out.Updated, AsOf: out.Sum.At,
		Totals: core.WithOwn(out.Sum.Values, out.Own), Shards: out.Sum.Shards, NumShards: out.NumShards, Grew: out.Grew, Shrank: out.Shrank,
		Parts: out.Parts, Aggregates: out.Aggregates, Moves: len(out.Moves), Covered: covered}
	for _, p := range out.Sum.Parts {
		info.Ranges = append(info.Ranges, [2]string{p.Lo, p.Hi})
	}
	return info
}

// DefaultConfirmBatch is how many hints a follower holds for a counter
// before it reads the parent sooner than its ConfirmEvery.
const DefaultConfirmBatch = 250

// trustLeader is how many hints a follower holds for a counter written
// within the spacing by another instance before it trusts that instance to
// fold it again: events spread over instances at random, so the leader then
// almost surely holds some too.
const trustLeader = 8

// Limits of a tracker.
const (
	rememberCounters = 10000                  // counters whose parent is remembered while idle
	margin           = time.Millisecond       // kept from a read time derived from the local clock
	absentLag        = 500 * time.Millisecond // a document read as gone answers its creation when read this long after it (core.Parent.Created)
	minBackoff       = 100 * time.Millisecond // after a failed read or fold
	maxBackoff       = 5 * time.Second
)

// tracked is one counter as this instance sees it.
type tracked struct {
	id       string
	layout   core.Layout
	p        core.Parent
	known    bool      // p was read, or written by us
	mine     time.Time // update_time of this instance's last fold of the counter
	read     time.Time // local time of the last read of the parent
	pause    time.Time // no fold before this local time (after an unfoldable sum)
	waiting  []*waiter
	running  bool
	wake     chan struct{}
	base     fold.Sum  // growth is measured from this snapshot
	shrinkAt time.Time // read time of the sum shrinking was last measured at, or of the first with shrinkN shards
	shrinkN  int       // num_shards as shrinkAt found it
	used     time.Time
	// childAt: of the children of valued sources (a sum or an average is
	// declared over them) that events asked for, the read time of the
	// value the document's aggregates hold, as this instance's folds
	// found it; cleared when no event is held.
	childAt map[childKey]time.Time
}

// childKey names a child of an aggregated source.
type childKey struct{ source, id string }

type waiter struct {
	ctx  context.Context
	at   time.Time
	life string         // of the counted document the event's shard is of
	one  *core.OneShard // what the event says of a counter on one shard, if anything
	// child: the child of an aggregated collection the event is of; nil
	// for a shard's event
	child *aggregate.Child
	// valued: the child's collection has a sum or an average declared
	// over it, whose fold reads the child
	valued bool
	// created: the event is the creation of the counted document, in
	// life: it wants every count and aggregate on it
	created bool
	// moved: the event is of a shard of an earlier life than the
	// document's, and what that life took since the document's began is
	// moved into it (stray)
	moved bool
	done  chan error
}

// stray reports whether w is the event of a shard of another life than
// the one c's document has: what that life took after the document's
// began is to be moved into it before a fold answers w. t.mu is held.
func (c *tracked) stray(w *waiter) bool {
	return w.life != "" && c.p.Life != "" && w.child == nil && !w.created && c.known && c.p.Exists && !c.p.Seen && w.life != c.p.Life
}

// covers reports whether the parent as c knows it holds w's write: for a
// child, its part's counts aggregated at or after it, and, of a valued
// source, the child's value read at or after it.
func (c *tracked) covers(w *waiter) bool {
	if w.created {
		return c.p.Created(w.life, w.at, absentLag, c.layout, c.id)
	}
	if w.child == nil {
		return (w.moved || !c.stray(w)) && c.p.Covers(w.at)
	}
	if !c.p.CoversChild(w.child.Source, w.child.ID, w.at) {
		return false
	}
	if !w.valued || !c.p.Exists {
		return true // a document that is gone holds nothing, and needs nothing folded
	}
	at, ok := c.childAt[childKey{w.child.Source, w.child.ID}]
	return ok && !at.Before(w.at)
}

// counting is how many of c's waiters are of shards. t.mu is held.
func (c *tracked) counting() int {
	n := 0
	for _, w := range c.waiting {
		if w.child == nil {
			n++
		}
	}
	return n
}

// foldBound bounds one fold: within the deployed function's 60 s timeout.
const foldBound = 30 * time.Second

// newTracker returns a tracker folding with s on the clock now, whose
// followers read the parent at least every confirmEvery (0: five windows).
func newTracker(s store, now func() time.Time, grow GrowPolicy, confirmEvery time.Duration, log *slog.Logger) *tracker {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if confirmEvery <= 0 {
		confirmEvery = 5 * max(s.Spacing(), 100*time.Millisecond)
	}
	return &tracker{store: s, now: now, spacing: s.Spacing(), grow: grow, confirmEvery: confirmEvery, confirmBatch: DefaultConfirmBatch,
		log: log, foldBound: foldBound, counters: map[string]*tracked{}}
}

// Wait returns once a fold covering h is on the parent, or with ctx's error.
func (t *tracker) Wait(ctx context.Context, h eventHint) error {
	t.mu.Lock()
	c, w := t.hold(ctx, h)
	if w == nil {
		t.mu.Unlock()
		return nil
	}
	if !c.running {
		c.running = true
		go t.run(c)
	} else if n := len(c.waiting); n == t.confirmBatch || n == measureAt && t.grow.on() {
		select {
		case c.wake <- struct{}{}:
		default:
		}
	}
	t.mu.Unlock()
	select {
	case err := <-w.done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// hold adds h to its counter's waiters, and returns them, or a nil waiter
// if the known parent covers h already. What an event of a counter on one
// shard tells of the parent replaces an older view. t.mu is held.
func (t *tracker) hold(ctx context.Context, h eventHint) (*tracked, *waiter) {
	c := t.counter(h.Counter)
	w := &waiter{ctx: ctx, at: h.At, life: h.Life, one: h.One, child: h.Child, created: h.Created, done: make(chan error, 1)}
	if h.Child != nil {
		w.valued = t.store.Layout().Valued(h.Counter, h.Child.Source)
	}
	if c.known && c.covers(w) {
		return c, nil
	}
	if h.One != nil && !h.One.Seen.IsZero() && h.One.Seen.Before(h.At) && (!c.known || c.p.Updated.Before(h.One.Seen)) &&
		len(t.store.Layout().WindowsOf(h.Counter)) == 0 && // windows move on what the document holds: read it
		rank.Known(t.store.Layout().Boards(h.Counter), h.One.Ranked) { // and ranks on the cells it records, unless the write carried them
		c.p, c.known = core.SeenAt(h.Life, h.One.Seen, h.At, t.now()), true // newer than this instance knew: no need to read it
		c.p.Ranked = h.One.Ranked
	}
	c.waiting = append(c.waiting, w)
	return c, w
}

// counter returns id's state, remembering at most rememberCounters idle
// ones. t.mu is held.
func (t *tracker) counter(id string) *tracked {
	c := t.counters[id]
	if c == nil {
		if len(t.counters) >= rememberCounters {
			t.forget()
		}
		c = &tracked{id: id, layout: t.store.Layout(), wake: make(chan struct{}, 1)}
		t.counters[id] = c
	}
	c.used = t.now()
	return c
}

// forget drops the remembered counters idle for a minute or more, or, if
// that is not enough, every idle one. t.mu is held.
func (t *tracker) forget() {
	now := t.now()
	for _, cut := range []time.Duration{time.Minute, 0} {
		for id, c := range t.counters {
			if !c.running && now.Sub(c.used) >= cut {
				delete(t.counters, id)
			}
		}
		if len(t.counters) < rememberCounters {
			return
		}
	}
}

// run works for c's waiters until none is left.
func (t *tracker) run(c *tracked) {
	backoff := minBackoff
	for {
		t.mu.Lock()
		t.settle(c)
		if len(c.waiting) == 0 {
			c.running = false
			t.mu.Unlock()
			return
		}
		wait, next := t.plan(c)
		t.mu.Unlock()
		if wait > 0 {
			timer := time.NewTimer(wait)
			select {
			case <-timer.C:
			case <-c.wake:
				timer.Stop()
				continue
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), t.foldBound)
		err := t.take(ctx, c, next)
		cancel()
		if err == nil {
			backoff = minBackoff
			continue
		}
		if fsrpc.Permanent(err) {
			// No retry can cure it (a document Firestore refuses to take,
			// say): answer the events held rather than have the platform
			// send them again without end, and say so.
			t.log.Error("rollup: cannot fold: Firestore refuses it for good; the events held are answered", "counter", c.id, "error", err.Error())
			t.mu.Lock()
			c.known, c.pause = false, t.now().Add(t.spacing)
			t.answer(c, maxWaiterTime(c), nil)
			t.mu.Unlock()
			continue
		}
		t.log.Warn("rollup: fold failed, will try again", "counter", c.id, "error", err.Error())
		t.mu.Lock()
		c.known = false
		t.mu.Unlock()
		time.Sleep(backoff/2 + rand.N(backoff/2))
		backoff = min(2*backoff, maxBackoff)
	}
}

// settle answers the waiters the known parent covers and drops those whose
// handler gave up. t.mu is held.
func (t *tracker) settle(c *tracked) {
	kept := c.waiting[:0]
	for _, w := range c.waiting {
		switch {
		case c.known && c.covers(w):
			w.done <- nil
		case w.ctx.Err() == nil:
			kept = append(kept, w)
		}
	}
	clear(c.waiting[len(kept):])
	c.waiting = kept
	if len(kept) == 0 {
		c.childAt = nil
	}
}

// maxWaiterTime is the time of c's latest event held. t.mu is held.
func maxWaiterTime(c *tracked) time.Time {
	var m time.Time
	for _, w := range c.waiting {
		m = maxTime(m, w.at)
	}
	return m
}
