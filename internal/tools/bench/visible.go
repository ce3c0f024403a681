package bench

import (
	"slices"
	"time"

	"github.com/tallycounters/tally/internal/tools/bench/report"
)

// spreadOf summarises d, which it sorts.
func spreadOf(d []time.Duration) *report.Spread {
	if len(d) == 0 {
		return nil
	}
	slices.Sort(d)
	return &report.Spread{N: len(d), P50: ms(percentile(d, .5)), P90: ms(percentile(d, .9)), P99: ms(percentile(d, .99)), Max: ms(d[len(d)-1])}
}

// visibleLatency pairs the k-th acknowledged increment of each counter with
// the first snapshot its listener got whose total reached k. Increments are
// all +1, so an exact total only grows.
func visibleLatency(acks []ack, l *listeners, counters int, seconds float64, window time.Duration) *report.Visible {
	byCounter := make([][]time.Time, counters)
	for _, a := range acks {
		byCounter[a.Counter] = append(byCounter[a.Counter], a.At)
	}
	v := &report.Visible{}
	var all, hot, quiet []time.Duration
	for i, times := range byCounter {
		if len(times) == 0 {
			continue
		}
		slices.SortFunc(times, time.Time.Compare)
		seen := l.sightings(i)
		isHot := float64(len(times))/seconds > float64(time.Second)/float64(window)
		if isHot {
			v.HotCounters++
		} else {
			v.QuietCounters++
		}
		j := 0
		for k, at := range times {
			for j < len(seen) && seen[j].Total < int64(k+1) {
				j++
			}
			if j == len(seen) {
				v.Unseen += len(times) - k
				break
			}
			d := max(0, seen[j].At.Sub(at))
			all = append(all, d)
			if isHot {
				hot = append(hot, d)
			} else {
				quiet = append(quiet, d)
			}
		}
	}
	v.All, v.Hot, v.Quiet = spreadOf(all), spreadOf(hot), spreadOf(quiet)
	return v
}
