package bench

import (
	"context"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/googleapis/gax-go/v2"
	"golang.org/x/time/rate"
)

// ack is one acknowledged increment.
type ack struct {
	Counter   int // index into the mode's counters
	Shard     int
	At        time.Time // when the answer came
	Committed time.Time // when the write committed, as the answer says; zero if it does not
}

// answer is what one increment was answered.
type answer struct {
	Shard      int
	Status     int           // the HTTP status; 200 for a client write that succeeded; 0 for none (the request failed)
	RetryAfter time.Duration // a refusal's Retry-After
	Committed  time.Time     // the write's commit time, if the answer says it
}

// refused reports whether status is a refusal that says nothing was
// written and a retry is safe.
func refused(status int) bool {
	return status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable
}

// counterAnswers counts one counter's answers other than 200.
type counterAnswers struct {
	Refused int64 // 429 and 503: nothing written, by the contract
	Other   int64 // anything else: 504, 500, or no answer at all
}

// loadResult is what the load generator saw.
type loadResult struct {
	Start, End time.Time
	Acks       []ack
	Latencies  []time.Duration
	Errors     int64            // answers other than 200
	Statuses   map[int]int64    // answers by status; 0: no answer
	PerCounter []counterAnswers // by counter index
}

// incrementFunc adds by to a counter and says how it was answered. An
// error is a request that got no answer.
type incrementFunc func(ctx context.Context, counter string, by int64) (answer, error)

// load is how the clients of a run behave.
type load struct {
	workers int
	rate    float64       // increments per second over all clients; 0: unlimited
	rest    time.Duration // a client rests a random time up to rest after each answer
	pick    picker
}

// maxRetryAfter caps how long a client waits on a refusal's Retry-After.
const maxRetryAfter = time.Second

// drive runs the clients of l over counters for d: each waits for the rate
// limiter, increments the counter its picker gives, records the answer,
// rests, and goes on. A refused increment (429 or 503) is tried again after
// its Retry-After, as a client is told to. progress is called about five
// times a second with the acknowledgements so far, and once more, done, at
// the end.
func drive(ctx context.Context, counters []string, l load, d time.Duration,
	inc incrementFunc, progress func(elapsed time.Duration, acked int64, done bool)) loadResult {
	limit := rate.Inf
	if l.rate > 0 {
		limit = rate.Limit(l.rate)
	}
	if l.pick == nil {
		l.pick = inTurns(len(counters), 1)
	}
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	rec := &recorder{res: loadResult{Start: time.Now(), Statuses: map[int]int64{}, PerCounter: make([]counterAnswers, len(counters))}}
	doneCh, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-doneCh:
				return
			case <-t.C:
				progress(time.Since(rec.res.Start), rec.acked.Load(), false)
			}
		}
	}()
	lim := rate.NewLimiter(limit, l.workers)
	var wg sync.WaitGroup
	for w := 0; w < l.workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			client(ctx, w, counters, l, lim, inc, rec)
		}()
	}
	wg.Wait()
	close(doneCh)
	<-stopped // no report of the load may follow its last
	rec.res.End = time.Now()
	progress(rec.res.End.Sub(rec.res.Start), rec.acked.Load(), true)
	return rec.res
}

// recorder keeps the load's answers as its clients get them.
type recorder struct {
	mu    sync.Mutex
	res   loadResult
	acked atomic.Int64
}

// record keeps the answer a to an increment of counter i, sent at t0 and
// answered at t1.
func (rec *recorder) record(i int, a answer, t0, t1 time.Time) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	res := &rec.res
	res.Statuses[a.Status]++
	switch {
	case a.Status == http.StatusOK:
		res.Acks = append(res.Acks, ack{Counter: i, Shard: a.Shard, At: t1, Committed: a.Committed})
		res.Latencies = append(res.Latencies, t1.Sub(t0))
		rec.acked.Add(1)
	case refused(a.Status):
		res.Errors++
		res.PerCounter[i].Refused++
	default:
		res.Errors++
		res.PerCounter[i].Other++
	}
}

// client w of the load: until ctx ends, it waits for the rate limiter,
// increments the counter its picker gives (or the one just refused, after
// its Retry-After), records the answer, and rests.
func client(ctx context.Context, w int, counters []string, l load, lim *rate.Limiter, inc incrementFunc, rec *recorder) {
	r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(w)))
	next := l.pick(w, r)
	retry := -1 // the counter of a refused increment, tried again
	for lim.Wait(ctx) == nil {
		i := retry
		if i < 0 {
			i = next()
		}
		t0 := time.Now()
		// The request itself is not cut off at the end of the run.
		a, err := inc(context.WithoutCancel(ctx), counters[i], 1)
		if err != nil {
			a.Status = 0
		}
		rec.record(i, a, t0, time.Now())
		retry = -1
		if refused(a.Status) && a.RetryAfter > 0 {
			retry = i
			if gax.Sleep(ctx, min(a.RetryAfter, maxRetryAfter)) != nil {
				return
			}
			continue
		}
		if l.rest > 0 && gax.Sleep(ctx, rand.N(l.rest)) != nil {
			return
		}
	}
}
