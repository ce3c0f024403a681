package bench

import (
	"math"
	"sort"
	"time"
)

// ptr is a pointer to a copy of v, for the figures that may be null.
func ptr[T any](v T) *T { return &v }

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// percentile of sorted durations, p in [0, 1].
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// lags pairs the k-th acknowledged increment of a counter with the first
// parent write whose total reached k. Increments are all +1, so totals
// only grow while the rollup is exact.
func lags(ackTimes []time.Time, writes []write) (out []time.Duration, unreached int) {
	j := 0
	for k, at := range ackTimes {
		for j < len(writes) && writes[j].Total < int64(k+1) {
			j++
		}
		if j == len(writes) {
			unreached += len(ackTimes) - k
			break
		}
		out = append(out, max(0, writes[j].At.Sub(at)))
	}
	return out, unreached
}

// perSecond buckets times into whole seconds from start.
func perSecond(times []time.Time, start time.Time, seconds int) []int {
	b := make([]int, seconds)
	for _, t := range times {
		d := t.Sub(start)
		if i := int(d / time.Second); d >= 0 && i < seconds { // d/s rounds toward 0: a time just before start is not in second 0
			b[i]++
		}
	}
	return b
}

// totalAt is the total after the last write at or before t.
func totalAt(writes []write, t time.Time) int64 {
	i := sort.Search(len(writes), func(i int) bool { return writes[i].At.After(t) })
	if i == 0 {
		return 0
	}
	return writes[i-1].Total
}

// countUpTo is how many of the sorted times are at or before t.
func countUpTo(sorted []time.Time, t time.Time) int {
	return sort.Search(len(sorted), func(i int) bool { return sorted[i].After(t) })
}
