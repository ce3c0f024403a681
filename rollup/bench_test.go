package rollup

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"

	"github.com/tallycounters/tally/internal/emulatortest"
	"github.com/tallycounters/tally/internal/eventarc"
	"github.com/tallycounters/tally/layout"
)

func BenchmarkDecode(b *testing.B) {
	t0 := time.Now()
	e := eventarc.Written("demo", "(default)",
		eventarc.IntDoc("counters/likes/shards/3", "count", 41, t0), eventarc.IntDoc("counters/likes/shards/3", "count", 42, t0.Add(time.Millisecond)))
	d := Decoder{Layout: layout.Default()}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := d.Decode(e); err != nil {
			b.Fatal(err)
		}
	}
}

// chain returns n events per shard that follow each other, as a shard's
// increments would, with versions in the past so that none repeats.
func chain(counter string, shards, n int) [][]event.Event {
	base := time.Now().Add(-time.Hour)
	out := make([][]event.Event, shards)
	for s := range shards {
		path := fmt.Sprintf("counters/%s/shards/%d", counter, s)
		var before *eventarc.Doc
		for k := 1; k <= n; k++ {
			after := eventarc.IntDoc(path, "count", int64(k), base.Add(time.Duration(k*shards+s)*time.Microsecond))
			out[s] = append(out[s], eventarc.Written(emulatortest.Project, "(default)", before, after))
			before = after
		}
	}
	return out
}

// BenchmarkHandlePeakMemory feeds Handle 1,000 events per second for three
// seconds on one counter of 10 shards, with the default 1 s group-commit
// window, so about a thousand handlers wait at any time, and reports the
// peak heap in use above the starting point.
func BenchmarkHandlePeakMemory(b *testing.B) {
	const rate, seconds, shards = 1000, 3, 10 // shards events per 10ms tick
	client := emulatortest.Client(b)
	for b.Loop() {
		id := emulatortest.ID(b)
		events := chain(id, shards, rate*seconds/shards)
		// The counter exists, as Increment or an admin creates it.
		if _, err := layout.Default().Counter(client, id).Set(context.Background(), map[string]any{layout.FieldNumShards: shards}); err != nil {
			b.Fatal(err)
		}
		h := New(client, Config{Layout: layout.Default(), Window: DefaultWindow})
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
		// Every 10 ms, one event for each shard: 1,000 a second.
		tick := time.NewTicker(10 * time.Millisecond)
		start := time.Now()
		for k := range rate * seconds / shards {
			<-tick.C
			for s := range shards {
				wg.Add(1)
				go func(e event.Event) {
					defer wg.Done()
					if err := h.Handle(context.Background(), e); err != nil {
						b.Error(err)
					}
				}(events[s][k])
			}
		}
		tick.Stop()
		sent := time.Since(start)
		wg.Wait()
		close(stop)
		<-sampled
		b.ReportMetric(float64(peak-base.HeapInuse)/(1<<20), "peak-heap-MB")
		b.ReportMetric(float64(rate*seconds)/sent.Seconds(), "events/s")
		snap, err := layout.Default().Counter(client, id).Get(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		if got := snap.Data()[layout.FieldTotal]; got != int64(rate*seconds) {
			b.Fatalf("total = %v, want %d", got, rate*seconds)
		}
	}
}
