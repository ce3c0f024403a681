package rollup

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/fold"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/testkit/layouttest"
	"github.com/tallycounters/tally/internal/tools/eventarc"
)

// BenchmarkHandlePeakMemory feeds Handle 1,000 events per second for three
// seconds on one counter of 10 shards, with the default 1 s window, and
// reports the peak heap in use above the starting point and the most
// handlers waiting at once. The shards hold their counts before the load;
// each event is dated when it is sent, as a write just made would be.
func BenchmarkHandlePeakMemory(b *testing.B) {
	const rate, seconds, shards = 1000, 3, 10 // shards events per 10ms tick
	client := emulatortest.Client(b)
	l := core.Default()
	for b.Loop() {
		id := emulatortest.ID(b)
		if _, err := l.Counter(client, id).Set(context.Background(), map[string]any{core.FieldNumShards: shards}); err != nil {
			b.Fatal(err)
		}
		for s := range shards {
			if _, err := l.Shard(client, id, "", s).Set(context.Background(), map[string]any{"count": rate * seconds / shards}); err != nil {
				b.Fatal(err)
			}
		}
		h := New(client, Config{Layout: layouttest.Public(l), Project: emulatortest.Project, Spacing: fold.DefaultSpacing})
		runtime.GC()
		var base runtime.MemStats
		runtime.ReadMemStats(&base)
		peak := base.HeapInuse
		stop := make(chan struct{})
		sampled := make(chan struct{})
		go func() {
			defer close(sampled)
			var m runtime.MemStats
			for {
				select {
				case <-stop:
					return
				case <-time.After(20 * time.Millisecond):
					runtime.ReadMemStats(&m)
					peak = max(peak, m.HeapInuse)
				}
			}
		}()
		var wg sync.WaitGroup
		var inflight, most atomic.Int64
		tick := time.NewTicker(10 * time.Millisecond)
		start := time.Now()
		for range rate * seconds / shards {
			<-tick.C
			now := time.Now()
			for s := range shards {
				wg.Add(1)
				go func(e event.Event) {
					defer wg.Done()
					n := inflight.Add(1)
					for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
					}
					defer inflight.Add(-1)
					if err := h.Handle(context.Background(), e); err != nil {
						b.Error(err)
					}
				}(eventarc.Written(emulatortest.Project, "(default)", nil,
					eventarc.IntDoc(fmt.Sprintf("counters/%s/shards/%d", id, s), "count", 1, now)))
			}
		}
		tick.Stop()
		sent := time.Since(start)
		wg.Wait()
		close(stop)
		<-sampled
		b.ReportMetric(float64(peak-base.HeapInuse)/(1<<20), "peak-heap-MB")
		b.ReportMetric(float64(rate*seconds)/sent.Seconds(), "events/s")
		b.ReportMetric(float64(most.Load()), "most-waiting")
		snap, err := l.Counter(client, id).Get(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		if got := snap.Data()[core.FieldTotal]; got != int64(rate*seconds) {
			b.Fatalf("total = %v, want %d", got, rate*seconds)
		}
	}
}
