package rollup

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/fold"
	"github.com/tallycounters/tally/internal/testkit/heaptest"
)

// BenchmarkTrackerCountersSeen measures what the counters an instance has
// seen cost it in memory once their events are answered: each is left as
// a fold leaves it, parent known and idle. It reports the live heap for
// 10,000 and 100,000 counters seen, per counter seen, how many the tracker
// still remembers (at most rememberCounters, plus any with events
// waiting) and the goroutines an idle counter keeps (none).
func BenchmarkTrackerCountersSeen(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				goroutines := runtime.NumGoroutine()
				var t *tracker
				heaptest.PerCounter(b, n, func() any {
					t = newTracker(newFolderStore(nil, fold.NewFolder(nil, core.Default(), fold.DefaultSpacing)), time.Now, GrowPolicy{}, 0, nil)
					now := time.Now()
					for i := range n {
						t.mu.Lock()
						c := t.counter(fmt.Sprintf("post-%d-likes", i))
						c.p = core.Parent{Exists: true, Updated: now, Written: now, AsOf: now, Totals: []int64{int64(i)}, NumShards: 10, Anchor: now, AnchorAt: now}
						c.known, c.mine, c.read = true, now, now
						t.mu.Unlock()
					}
					return t
				})
				b.ReportMetric(float64(len(t.counters)), "remembered")
				b.ReportMetric(float64(runtime.NumGoroutine()-goroutines), "goroutines")
			}
		})
	}
}
