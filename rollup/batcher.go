package rollup

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"
)

// Limits of one group commit.
const (
	maxBatch      = 5000             // changes in one transaction; the rest wait
	maxRates      = 10000            // counters whose rate is tracked
	commitTimeout = 60 * time.Second // default bound on one commit
)

// Batcher commits the changes for each counter in groups: the first change
// for an idle counter is committed at once, and every change that arrives
// while a commit runs or within Window after it goes into the next commit.
// So the parent is written at most once per Window per Batcher, whatever the
// event rate, and each caller still returns only after its change committed.
type Batcher struct {
	applier *Applier
	window  time.Duration
	log     *slog.Logger

	mu     sync.Mutex
	queues map[string]*queue
	rates  map[string]*rateWindow

	// CommitTimeout bounds one commit, waits included; default 60s.
	CommitTimeout time.Duration

	// OnCommit, if set before the first Submit, is called after each commit
	// with the counter, the batch size and when the commit started and ended.
	OnCommit func(counter string, changes int, start, end time.Time, err error)
}

type queue struct {
	waiting []waiter
}

// rateWindow counts a counter's events since start, for growth.
type rateWindow struct {
	start  time.Time
	events int
}

type waiter struct {
	change Change
	done   chan<- error
}

// NewBatcher groups the changes given to Submit into one Apply per window.
// Each commit is logged at debug level to log, which may be nil.
func NewBatcher(a *Applier, window time.Duration, log *slog.Logger) *Batcher {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Batcher{applier: a, window: window, log: log, queues: map[string]*queue{}, rates: map[string]*rateWindow{}}
}

// Submit queues c and waits until the commit holding it ends. An error
// means c may not be committed and should be retried; retrying a committed
// change is harmless, as Apply skips it.
func (b *Batcher) Submit(ctx context.Context, c Change) error {
	done := make(chan error, 1)
	b.mu.Lock()
	q, running := b.queues[c.Counter]
	if !running {
		q = &queue{}
		b.queues[c.Counter] = q
	}
	q.waiting = append(q.waiting, waiter{change: c, done: done})
	b.mu.Unlock()
	if !running {
		go b.run(c.Counter, q)
	}
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// run commits q's waiting changes, one batch per window, until a whole
// window passes with none; then the counter counts as idle again.
func (b *Batcher) run(counter string, q *queue) {
	for {
		batch := b.take(counter, q, maxBatch, true)
		if len(batch) == 0 {
			return
		}
		start := time.Now()
		res, err := b.commit(counter, q, &batch)
		end := time.Now()
		if b.OnCommit != nil {
			b.OnCommit(counter, len(batch), start, end, err)
		}
		switch {
		case err != nil:
			b.log.Warn("rollup: commit failed", "counter", counter, "changes", len(batch), "error", err.Error())
		case res.Grew:
			b.log.Info("rollup: added shards to a busy counter", "counter", counter, "num_shards", res.Shards)
		default:
			b.log.Debug("rollup: committed", "counter", counter, "changes", len(batch), "delta", res.Delta,
				"applied", res.Applied, "skipped", res.Skipped, "repaired", res.Repaired, "ms", end.Sub(start).Milliseconds())
		}
		for _, w := range batch {
			w.done <- err
		}
		// The next write to this parent comes no sooner than one window
		// after this one ended.
		time.Sleep(b.window)
	}
}

// commit applies batch. While another instance's recent write makes the
// applier wait, the changes that arrive meanwhile join the batch.
func (b *Batcher) commit(counter string, q *queue, batch *[]waiter) (Result, error) {
	timeout := b.CommitTimeout
	if timeout <= 0 {
		timeout = commitTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for {
		changes := make([]Change, len(*batch))
		for i, w := range *batch {
			changes[i] = w.change
		}
		res, wait, err := b.applier.Attempt(ctx, counter, changes, b.rate(counter))
		if wait == 0 {
			return res, err
		}
		if err := sleep(ctx, wait); err != nil {
			return Result{}, fmt.Errorf("rollup: commit to %s: %w", counter, err)
		}
		*batch = append(*batch, b.take(counter, q, maxBatch-len(*batch), false)...)
	}
}

// take removes up to n waiting changes from q. With retire, an empty q is
// retired, so that the next Submit starts a new run.
func (b *Batcher) take(counter string, q *queue, n int, retire bool) []waiter {
	b.mu.Lock()
	defer b.mu.Unlock()
	batch := slices.Clone(q.waiting[:min(n, len(q.waiting))])
	q.waiting = q.waiting[len(batch):]
	if retire && len(batch) == 0 {
		delete(b.queues, counter)
		return nil
	}
	w := b.rates[counter]
	if w == nil {
		if len(b.rates) >= maxRates {
			clear(b.rates) // counters seen long ago; rates restart
		}
		w = &rateWindow{start: time.Now()}
		b.rates[counter] = w
	}
	w.events += len(batch)
	return batch
}

// rate is counter's events per second over the growth period just ended,
// or 0 while the period runs or growth is off.
func (b *Batcher) rate(counter string) float64 {
	g := b.applier.Grow
	if g.PerShard <= 0 {
		return 0
	}
	period := g.Period
	if period <= 0 {
		period = 10 * time.Second
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	w := b.rates[counter]
	if w == nil {
		return 0
	}
	el := time.Since(w.start)
	if el < period {
		return 0
	}
	r := float64(w.events) / el.Seconds()
	*w = rateWindow{start: time.Now()}
	return r
}
