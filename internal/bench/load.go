package bench

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
)

// ack is one acknowledged increment.
type ack struct {
	Counter int // index into the mode's counters
	Shard   int
	At      time.Time
}

// loadResult is what the load generator saw.
type loadResult struct {
	Start, End time.Time
	Acks       []ack
	Latencies  []time.Duration
	Errors     int64
}

// incrementFunc adds 1 to a counter and says which shard (or -1) took it.
type incrementFunc func(ctx context.Context, counter string) (shard int, err error)

// drive runs workers that each loop: wait for the rate limiter, increment the
// next counter, record the answer; until the duration is over. progress is
// called about five times a second with the acknowledgements so far, and
// once more, done, at the end.
func drive(ctx context.Context, counters []string, workers int, perSecond float64, d time.Duration,
	inc incrementFunc, progress func(elapsed time.Duration, acked int64, done bool)) loadResult {
	limit := rate.Inf
	if perSecond > 0 {
		limit = rate.Limit(perSecond)
	}
	lim := rate.NewLimiter(limit, workers)
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()

	var (
		mu     sync.Mutex
		res    = loadResult{Start: time.Now()}
		next   atomic.Int64
		acked  atomic.Int64
		wg     sync.WaitGroup
		doneCh = make(chan struct{})
	)
	{
		go func() {
			t := time.NewTicker(200 * time.Millisecond)
			defer t.Stop()
			for {
				select {
				case <-doneCh:
					return
				case <-t.C:
					progress(time.Since(res.Start), acked.Load(), false)
				}
			}
		}()
	}
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for lim.Wait(ctx) == nil {
				i := int(next.Add(1)-1) % len(counters)
				t0 := time.Now()
				// The request itself is not cut off at the end of the run.
				shard, err := inc(context.WithoutCancel(ctx), counters[i])
				t1 := time.Now()
				mu.Lock()
				if err != nil {
					res.Errors++
				} else {
					res.Acks = append(res.Acks, ack{Counter: i, Shard: shard, At: t1})
					res.Latencies = append(res.Latencies, t1.Sub(t0))
					acked.Add(1)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(doneCh)
	res.End = time.Now()
	progress(res.End.Sub(res.Start), acked.Load(), true)
	return res
}
