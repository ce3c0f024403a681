package rollup

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"
)

// Tracker holds the hints given to one instance until a fold covers them,
// and folds when it must. Per counter, the instance whose fold wrote the
// parent last leads: it folds again as soon as the window allows, with one
// aggregation read and no other. The others follow: each reads the parent
// once it holds confirmBatch hints, or confirmEvery after its last read,
// and then only at a random point shortly after the leader's next fold is
// due, so that followers never pile onto the parent at a window's edge and
// a read amortizes over many hints. A follower that finds the parent stale
// folds, and leads. Hints that the last known as_of covers (duplicates, late
// deliveries) are answered at once, with no read.
type Tracker struct {
	folder       *Folder
	window       time.Duration
	grow         GrowPolicy
	confirmEvery time.Duration
	confirmBatch int
	log          *slog.Logger
	onFold       func(FoldInfo)

	mu       sync.Mutex
	counters map[string]*tracked
}

// FoldInfo describes one fold a Tracker made, for logs and measurements.
type FoldInfo struct {
	Fold
	Covered int           // hints this fold answered on this instance
	Lag     time.Duration // from the oldest of those hints' writes to the fold's commit
}

// DefaultConfirmBatch is how many hints a follower holds for a counter
// before it reads the parent sooner than its ConfirmEvery.
const DefaultConfirmBatch = 250

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
	p       parent
	known   bool      // p was read, or written by us
	mine    time.Time // update_time of this instance's last fold of the counter
	read    time.Time // local time of the last read of the parent
	pause   time.Time // no fold before this local time (after an unfoldable sum)
	waiting []*waiter
	running bool
	wake    chan struct{}
	base    Sum // growth is measured from this snapshot
	used    time.Time
}

type waiter struct {
	ctx  context.Context
	at   time.Time
	done chan error
}

// NewTracker returns a Tracker folding with f, whose followers read the
// parent at least every confirmEvery (0: three windows).
func NewTracker(f *Folder, grow GrowPolicy, confirmEvery time.Duration, log *slog.Logger) *Tracker {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if confirmEvery <= 0 {
		confirmEvery = 5 * max(f.window, 100*time.Millisecond)
	}
	return &Tracker{folder: f, window: f.window, grow: grow, confirmEvery: confirmEvery, confirmBatch: DefaultConfirmBatch,
		log: log, counters: map[string]*tracked{}}
}

// Wait returns once a fold covering h is on the parent, or with ctx's error.
func (t *Tracker) Wait(ctx context.Context, h Hint) error {
	t.mu.Lock()
	c := t.counter(h.Counter)
	if c.known && c.p.covers(h.At) {
		t.mu.Unlock()
		return nil
	}
	w := &waiter{ctx: ctx, at: h.At, done: make(chan error, 1)}
	c.waiting = append(c.waiting, w)
	if !c.running {
		c.running = true
		go t.run(c)
	} else if len(c.waiting) == t.confirmBatch {
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
		case c.known && c.p.covers(w.at):
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
func (t *Tracker) plan(c *tracked) (time.Duration, action) {
	now := time.Now()
	if !c.known || now.Sub(c.p.AnchorAt) > 2*t.confirmEvery {
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
	due := c.p.Updated.Add(t.window)                              // the next fold's read time, at the earliest
	switch {
	case !c.p.Exists:
		return wait, t.foldNow
	case c.p.Updated.Equal(c.mine):
		return max(wait, due.Sub(serverNow)+margin), t.foldNow
	}
	// A follower: read after the leader's fold is due, and, while someone
	// leads, only once a read answers many hints; then wait a random while
	// more, so that followers never read, or fold, all at once.
	readAt := c.p.AnchorAt.Add(due.Sub(c.p.Anchor))
	// Someone leads if the parent's last write was a fold, made recently.
	leading := c.p.Updated.Sub(c.p.AsOf) < t.window && c.p.Anchor.Sub(c.p.Updated) < 2*t.window
	if leading && len(c.waiting) < t.confirmBatch {
		readAt = maxTime(readAt, c.read.Add(t.confirmEvery*3/4+rand.N(t.confirmEvery/2+1)))
	}
	readAt = maxTime(readAt, now).Add(t.window/10 + rand.N(t.window/5+1))
	return max(wait, readAt.Sub(now)), t.refresh
}

// refresh reads the parent, answers what it covers, and folds at once if the
// parent is due.
func (t *Tracker) refresh(ctx context.Context, c *tracked) error {
	p, err := t.folder.read(ctx, c.id)
	if err != nil {
		return err
	}
	t.mu.Lock()
	c.p, c.known, c.read = p, true, time.Now()
	t.settle(c)
	due := len(c.waiting) > 0 && time.Now().After(c.pause) &&
		(!p.Exists || !p.Anchor.Before(p.Updated.Add(t.window)))
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

// fold sums c's shards at at and writes that onto p.
func (t *Tracker) fold(ctx context.Context, c *tracked, p parent, at time.Time) error {
	s, err := t.folder.sumAt(ctx, c.id, at)
	if errors.Is(err, ErrSumNotInteger) {
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
	t.mu.Lock()
	grow := t.growTo(c, p, s)
	t.mu.Unlock()
	fold, next, err := t.folder.write(ctx, c.id, p, s, grow)
	t.mu.Lock()
	defer t.mu.Unlock()
	if errors.Is(err, errStale) {
		c.known = false
		return nil
	}
	if errors.Is(err, ErrNoShardField) {
		t.log.Error("rollup: cannot fold: is the shard field right? nothing written", "counter", c.id, "error", err.Error())
		c.pause = time.Now().Add(t.window)
		t.answer(c, at, nil)
		return nil
	}
	if err != nil {
		return err
	}
	c.p = next
	if fold.Wrote {
		c.mine = fold.Updated
	}
	covered, oldest := t.answer(c, s.At, nil)
	info := FoldInfo{Fold: fold, Covered: covered}
	if fold.Wrote && covered > 0 {
		info.Lag = fold.Updated.Sub(oldest)
	}
	t.logFold(info)
	return nil
}

// answer sends err to the waiters whose write is at or before at, and says
// how many there were and the oldest write among them.
func (t *Tracker) answer(c *tracked, at time.Time, err error) (int, time.Time) {
	n := 0
	var oldest time.Time
	kept := c.waiting[:0]
	for _, w := range c.waiting {
		if w.at.After(at) {
			kept = append(kept, w)
			continue
		}
		if n == 0 || w.at.Before(oldest) {
			oldest = w.at
		}
		n++
		w.done <- err
	}
	clear(c.waiting[len(kept):])
	c.waiting = kept
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
		"events", info.Covered, "shards", info.Sum.Shards, "total", info.Sum.Value,
		"as_of", info.Sum.At.Format(time.RFC3339Nano))
}
