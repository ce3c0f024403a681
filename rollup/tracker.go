package rollup

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/tallycounters/tally/counting"
)

// Tracker holds the hints given to one instance until a fold covers them,
// and folds when it must (see plan). A parent not written for a window is
// folded at once by whichever instance holds a hint for it. Per counter, the
// instance whose fold wrote the parent last leads: it folds again as soon
// as the window allows, with one aggregation read and no other. The others
// follow: each reads the parent just after the leader's next fold is due,
// and folds if the leader did not; one that holds many hints trusts the
// leader and reads only once it holds confirmBatch hints, or confirmEvery
// after its last read, so that a read amortizes over many hints. Hints that
// the last known as_of covers (duplicates, late deliveries) are answered at
// once, with no read.
type Tracker struct {
	folder       *counting.Folder
	window       time.Duration
	grow         GrowPolicy
	confirmEvery time.Duration
	confirmBatch int
	log          *slog.Logger
	onFold       func(FoldInfo)

	mu         sync.Mutex
	counters   map[string]*tracked
	staleViews float64 // moving share of folds on old views that found them stale
	shared     float64 // moving share of reads and writes of parents this instance wrote last that found another's write since
}

// FoldInfo describes one fold a Tracker made, for logs and measurements.
type FoldInfo struct {
	counting.Outcome
	Covered int           // hints this fold answered on this instance
	Lag     time.Duration // from the oldest of those hints' writes to the fold's commit
}

// DefaultConfirmBatch is how many hints a follower holds for a counter
// before it reads the parent sooner than its ConfirmEvery.
const DefaultConfirmBatch = 250

// trustLeader is how many hints a follower holds for a counter written
// within the window by another instance before it trusts that instance to
// fold it again: events spread over instances at random, so the leader then
// almost surely holds some too.
const trustLeader = 8

// Limits of a Tracker.
const (
	rememberCounters = 10000                  // counters whose parent is remembered while idle
	margin           = time.Millisecond       // kept from a read time derived from the local clock
	minBackoff       = 100 * time.Millisecond // after a failed read or fold
	maxBackoff       = 5 * time.Second
)

// tracked is one counter as this instance sees it.
type tracked struct {
	id      string
	p       counting.Parent
	known   bool      // p was read, or written by us
	mine    time.Time // update_time of this instance's last fold of the counter
	read    time.Time // local time of the last read of the parent
	pause   time.Time // no fold before this local time (after an unfoldable sum)
	waiting []*waiter
	running bool
	wake    chan struct{}
	base    counting.Sum // growth is measured from this snapshot
	used    time.Time
}

type waiter struct {
	ctx  context.Context
	at   time.Time
	life string             // of the counted document the event's shard is of
	one  *counting.OneShard // what the event says of a counter on one shard, if anything
	done chan error
}

// NewTracker returns a Tracker folding with f, whose followers read the
// parent at least every confirmEvery (0: three windows).
func NewTracker(f *counting.Folder, grow GrowPolicy, confirmEvery time.Duration, log *slog.Logger) *Tracker {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if confirmEvery <= 0 {
		confirmEvery = 5 * max(f.Window(), 100*time.Millisecond)
	}
	return &Tracker{folder: f, window: f.Window(), grow: grow, confirmEvery: confirmEvery, confirmBatch: DefaultConfirmBatch,
		log: log, counters: map[string]*tracked{}}
}

// Wait returns once a fold covering h is on the parent, or with ctx's error.
func (t *Tracker) Wait(ctx context.Context, h Hint) error {
	t.mu.Lock()
	c := t.counter(h.Counter)
	if c.known && c.p.Covers(h.At) {
		t.mu.Unlock()
		return nil
	}
	if h.One != nil && !h.One.Seen.IsZero() && h.One.Seen.Before(h.At) && (!c.known || c.p.Updated.Before(h.One.Seen)) {
		c.p, c.known = counting.SeenAt(h.Life, h.One.Seen, h.At, time.Now()), true // newer than this instance knew: no need to read it
	}
	w := &waiter{ctx: ctx, at: h.At, life: h.Life, one: h.One, done: make(chan error, 1)}
	c.waiting = append(c.waiting, w)
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

// counter returns id's state, remembering at most rememberCounters idle ones.
func (t *Tracker) counter(id string) *tracked {
	c := t.counters[id]
	if c == nil {
		if len(t.counters) >= rememberCounters {
			t.forget()
		}
		c = &tracked{id: id, wake: make(chan struct{}, 1)}
		t.counters[id] = c
	}
	c.used = time.Now()
	return c
}

// forget drops the remembered counters idle for a minute or more, or, if
// that is not enough, every idle one.
func (t *Tracker) forget() {
	for _, cut := range []time.Duration{time.Minute, 0} {
		for id, c := range t.counters {
			if !c.running && time.Since(c.used) >= cut {
				delete(t.counters, id)
			}
		}
		if len(t.counters) < rememberCounters {
			return
		}
	}
}

// run works for c's waiters until none is left.
func (t *Tracker) run(c *tracked) {
	backoff := minBackoff
	for {
		t.mu.Lock()
		t.settle(c)
		if len(c.waiting) == 0 {
			c.running = false
			t.mu.Unlock()
			return
		}
		wait, act := t.plan(c)
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
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := act(ctx, c)
		cancel()
		if err == nil {
			backoff = minBackoff
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
// handler gave up.
func (t *Tracker) settle(c *tracked) {
	kept := c.waiting[:0]
	for _, w := range c.waiting {
		switch {
		case c.known && c.p.Covers(w.at):
			w.done <- nil
		case w.ctx.Err() == nil:
			kept = append(kept, w)
		}
	}
	clear(c.waiting[len(kept):])
	c.waiting = kept
}

type action func(context.Context, *tracked) error

// plan says how long to wait, and then what to do, for c's waiters.
//
// A parent whose last write is a window old or more is due: whichever
// instance holds an event for it folds at once, so that a quiet counter's
// increment shows in its total within one fold, however many instances run.
// It folds on its own view of the parent if that view is fresh (its own
// write, or a read within the window), else it reads the parent first: the
// fold's write is a compare-and-set on that view, so a stale one costs a
// wasted sum. A parent written within the window by another instance is
// that instance's to fold again when the window ends; this one reads the
// parent just after that, and folds itself if nobody did. Only when it holds
// so many events that the leader surely holds some too does it leave the
// leader to fold and read rarely, so that one read answers many events.
func (t *Tracker) plan(c *tracked) (time.Duration, action) {
	now := time.Now()
	if !c.known {
		return 0, t.refresh
	}
	earliest := c.waiting[0].at
	for _, w := range c.waiting {
		if w.at.Before(earliest) {
			earliest = w.at
		}
	}
	serverNow := c.p.Now()
	wait := max(earliest.Sub(serverNow)+margin, c.pause.Sub(now)) // a hint dated ahead of this clock
	switch {
	case !c.p.Exists && t.folder.Layout().OnDocs():
		return wait, t.refresh // a document the app deleted: read again once the server passed its events
	case !c.p.Exists:
		return wait, t.foldNow
	}
	due := c.p.Written.Add(t.window) // the next fold's read time, at the earliest
	untilDue := due.Sub(serverNow) + margin
	if untilDue > t.grow.period() && t.needsProbe(c) {
		return 0, t.probe // a busy counter on one shard: the first of two sums to measure its rate by
	}
	age := now.Sub(c.p.AnchorAt) // of this instance's view of the parent
	switch {
	case c.p.Written.Equal(c.mine) && (age < t.window+t.window/2 || t.trustOldViews()):
		// It leads: fold when the window ends. Its view is sure until
		// then (no fold writes within the window); later, another
		// instance may have folded, so only a view at most half a window
		// past that is taken, where old views mostly turn out stale.
		return max(wait, untilDue), t.foldNow
	case c.p.Seen:
		return max(wait, untilDue), t.foldNow // as an event of a counter on one shard told it: fold on it, with no read, when the window ends
	case untilDue <= 0 && (age < t.window || t.trustOldViews()):
		return wait, t.foldNow
	case untilDue <= 0:
		return wait, t.refresh // refresh folds, if the parent is still due
	}
	// Another instance wrote the parent within the window: check just after
	// its next fold is due (later and at random, so that followers never
	// read all at once), and fold if it did not.
	readAt := now.Add(untilDue)
	if n := len(c.waiting); n >= trustLeader && n < t.confirmBatch {
		readAt = maxTime(readAt, c.read.Add(t.confirmEvery*3/4+rand.N(t.confirmEvery/2+1)))
	}
	readAt = readAt.Add(t.window/25 + rand.N(t.window/25+1))
	return max(wait, readAt.Sub(now)), t.refresh
}

// refresh reads the parent, answers what it covers, and folds at once if the
// parent is due.
func (t *Tracker) refresh(ctx context.Context, c *tracked) error {
	p, err := t.folder.Read(ctx, c.id)
	if err != nil {
		return err
	}
	t.mu.Lock()
	t.noteRead(c, p)
	c.p, c.known, c.read = p, true, time.Now()
	t.settle(c)
	due := len(c.waiting) > 0 && time.Now().After(c.pause) &&
		(!p.Exists && !t.folder.Layout().OnDocs() || p.Exists && !p.Anchor.Before(p.Written.Add(t.window)))
	t.mu.Unlock()
	if !due {
		return nil
	}
	return t.fold(ctx, c, p, p.Anchor)
}

// foldNow folds at the latest time the server has certainly passed.
func (t *Tracker) foldNow(ctx context.Context, c *tracked) error {
	t.mu.Lock()
	p := c.p
	t.mu.Unlock()
	return t.fold(ctx, c, p, p.Now().Add(-margin))
}

// fold sums c's shards now, at a read time no earlier than at, or takes the
// sum from an event held (see eventSum), and writes that onto p. If p turns
// out stale (someone wrote the parent since), it reads the parent and, if
// events are still held that the parent does not cover, writes the same sum
// onto it, if that is still a fold's to write (a sum from an event only
// while the parent still has one shard since before it; else it sums the
// shards); else it leaves c's waiters to plan again.
func (t *Tracker) fold(ctx context.Context, c *tracked, p counting.Parent, at time.Time) error {
	t.mu.Lock()
	s, fromEvent := t.eventSum(c, p, at)
	t.mu.Unlock()
	var err error
	if !fromEvent && p.Seen {
		// An event's word on the parent, with no sum to go with it: read
		// the parent, as a fold on it needs its counts.
		if p, err = t.folder.Read(ctx, c.id); err != nil {
			return err
		}
		t.mu.Lock()
		c.p, c.read = p, time.Now()
		at = maxTime(at, p.Anchor)
		s, fromEvent = t.eventSum(c, p, at)
		t.mu.Unlock()
	}
	if !fromEvent {
		s, err = t.folder.SumNow(ctx, c.id, p.Life, at)
	}
	if errors.Is(err, counting.ErrSumNotInteger) {
		t.log.Error("rollup: cannot fold: the sum of the shards is not an int64; nothing written",
			"counter", c.id, "error", err.Error())
		t.mu.Lock()
		c.pause = time.Now().Add(t.window)
		t.answer(c, at, nil)
		t.mu.Unlock()
		return nil
	}
	if err != nil {
		return err
	}
	optimistic := time.Since(p.AnchorAt) >= t.window // a view this old may be stale
	for attempt := 0; ; attempt++ {
		grow := 0
		if !fromEvent { // growth follows the shards' sums, never an event's counts
			t.mu.Lock()
			grow = t.growTo(c, p, s)
			t.mu.Unlock()
		}
		wrote, next, err := t.folder.Write(ctx, c.id, p, s, grow)
		if optimistic && attempt == 0 {
			t.noteView(errors.Is(err, counting.ErrStale))
		}
		if !c.mine.IsZero() && p.Written.Equal(c.mine) && (err == nil || errors.Is(err, counting.ErrStale)) {
			t.mu.Lock()
			t.noteShared(err != nil) // on its own last write: did another writer come between?
			t.mu.Unlock()
		}
		if errors.Is(err, counting.ErrStale) && attempt == 0 {
			if p, err = t.folder.Read(ctx, c.id); err != nil {
				return err
			}
			t.mu.Lock()
			t.noteRead(c, p)
			c.p, c.known, c.read = p, true, time.Now()
			t.settle(c)
			idle := len(c.waiting) == 0
			t.mu.Unlock()
			switch {
			case !p.Exists:
				return nil // deleted since: a sum from before must not bring it back
			case idle:
				return nil // the write that made it stale covered every event held
			case fromEvent && !p.Whole(t.folder.Layout(), t.defaults(), s.At):
				if s, err = t.folder.SumNow(ctx, c.id, p.Life, p.Anchor); err != nil {
					return err
				}
				fromEvent = false
			}
			continue
		}
		return t.folded(c, at, s, wrote, next, err)
	}
}

// folded records what one write of a fold did, and answers the waiters it
// covers.
func (t *Tracker) folded(c *tracked, at time.Time, s counting.Sum, wrote counting.Outcome, next counting.Parent, err error) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case errors.Is(err, counting.ErrStale):
		c.known = false
		return nil
	case errors.Is(err, counting.ErrTooSoon):
		return nil // another instance folded meanwhile: plan again
	case errors.Is(err, counting.ErrNoShardField):
		t.log.Error("rollup: cannot fold: is the shard field right? nothing written", "counter", c.id, "error", err.Error())
		c.pause = time.Now().Add(t.window)
		t.answer(c, at, nil)
		return nil
	case err != nil:
		return err
	}
	c.p = next
	if wrote.Wrote {
		c.mine = wrote.Updated
	}
	covered, oldest := c.coveredBy(s.At)
	info := FoldInfo{Outcome: wrote, Covered: covered}
	if wrote.Wrote && covered > 0 {
		info.Lag = wrote.Updated.Sub(oldest)
	}
	t.logFold(info) // first: whoever sees an event answered can see the fold that answered it
	t.answer(c, s.At, nil)
	return nil
}

// noteView records whether a fold on a view of the parent older than a
// window found it stale. Where that is usual (several instances share the
// counters), such folds read the parent first; where it is rare (one
// instance), they save that read.
func (t *Tracker) noteView(stale bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	x := 0.0
	if stale {
		x = 1
	}
	t.staleViews = 0.9*t.staleViews + 0.1*x
}

// trustOldViews reports whether folds on views older than a window mostly
// find them current. t.mu is held.
func (t *Tracker) trustOldViews() bool { return t.staleViews < 0.5 }

// noteRead records, for a read p of c's parent, whether another writer
// wrote it since this instance last did, if it ever did. Where that is
// usual, other instances fold the same counters: they hold events for
// them too. t.mu is held.
func (t *Tracker) noteRead(c *tracked, p counting.Parent) {
	if c.mine.IsZero() || !p.Exists || p.Written.Before(c.mine) {
		return
	}
	t.noteShared(p.Written.After(c.mine))
}

// noteShared records whether another writer wrote a parent since this
// instance last did. t.mu is held.
func (t *Tracker) noteShared(other bool) {
	x := 0.0
	if other {
		x = 1
	}
	t.shared = 0.9*t.shared + 0.1*x
}

// sharing reports whether other instances mostly fold the counters this
// one folds too. t.mu is held.
func (t *Tracker) sharing() bool { return t.shared >= 0.5 }

// answer answers c's waiters that at covers with err. t.mu is held.
func (t *Tracker) answer(c *tracked, at time.Time, err error) {
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

// coveredBy says how many of c's waiters at covers, and the oldest of
// them. t.mu is held.
func (c *tracked) coveredBy(at time.Time) (n int, oldest time.Time) {
	for _, w := range c.waiting {
		if w.at.After(at) {
			continue
		}
		if n == 0 || w.at.Before(oldest) {
			oldest = w.at
		}
		n++
	}
	return n, oldest
}

func (t *Tracker) logFold(info FoldInfo) {
	if t.onFold != nil {
		t.onFold(info)
	}
	if info.Grew {
		t.log.Info("rollup: added shards to a busy counter", "counter", info.Counter, "num_shards", info.NumShards)
	}
	if !info.Wrote {
		return
	}
	t.log.Info("rollup: fold", "counter", info.Counter, "lag_ms", info.Lag.Milliseconds(),
		"events", info.Covered, "shards", info.Sum.Shards, "totals", info.Sum.Values,
		"as_of", info.Sum.At.Format(time.RFC3339Nano))
}
