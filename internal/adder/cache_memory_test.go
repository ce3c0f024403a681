package adder

import (
	"fmt"
	"testing"
	"time"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/testkit/heaptest"
)

// BenchmarkShardCacheCountersSeen measures the num_shards cache of one
// Increment instance after 10,000 and 100,000 counters: the live heap, per
// counter seen, and how many it keeps (at most maxCached).
func BenchmarkShardCacheCountersSeen(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				var s *shardCounts
				heaptest.PerCounter(b, n, func() any {
					s = newShardCounts(nil, core.Default(), time.Minute, core.DefaultShards, func(string) bool { return true })
					for i := range n {
						s.put(fmt.Sprintf("post-%d-likes", i), parent{n: core.DefaultShards, seen: time.Now()})
					}
					return s
				})
				b.ReportMetric(float64(s.entries.Len()), "cached")
			}
		})
	}
}
