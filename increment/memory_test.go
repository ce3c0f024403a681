package increment

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/tallycounters/tally/layout"
)

// BenchmarkShardCacheCountersSeen measures the num_shards cache of one
// Increment instance after 10,000 and 100,000 counters: the live heap, per
// counter seen, and how many it keeps (at most maxCached).
func BenchmarkShardCacheCountersSeen(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				before := liveHeap()
				s := newShardCounts(nil, layout.Default(), time.Minute, DefaultShards, func(string) bool { return true })
				for i := range n {
					s.put(fmt.Sprintf("post-%d-likes", i), DefaultShards)
				}
				heap := liveHeap() - before
				b.ReportMetric(float64(heap)/(1<<20), "heap-MiB")
				b.ReportMetric(float64(heap)/float64(n), "B/counter-seen")
				b.ReportMetric(float64(s.entries.Len()), "cached")
				runtime.KeepAlive(s)
			}
		})
	}
}

// liveHeap is the bytes of heap objects live after a collection.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
