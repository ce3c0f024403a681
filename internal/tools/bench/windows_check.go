package bench

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/core/bytime"
	"github.com/tallycounters/tally/internal/tools/bench/report"
)

// measureWindows fills r from run: the load's answers, what it cost, the
// hot post's writes, and, in the windows mode, every post's series,
// windows and trend against the truth.
func (e *env) measureWindows(ctx context.Context, r *report.WindowsMode, run *winRun) error {
	hot, quiet := run.hot, run.quiet
	r.Increments = int64(len(hot.Acks) + len(quiet.Acks))
	r.Errors = hot.Errors + quiet.Errors
	if d := hot.End.Sub(hot.Start).Seconds(); d > 0 {
		r.HotPerSec = float64(len(hot.Acks)) / d
	}
	if r.Increments == 0 {
		return fmt.Errorf("no increment was acknowledged (%d failed)", r.Errors)
	}
	n := float64(r.Increments)
	inc := e.ops[report.ModeTally]
	r.IncrementReads, r.IncrementWrites = float64(inc.Reads())/n, float64(inc.Writes())/n
	hotWrites, err := e.rollupWindows(r, n)
	if err != nil {
		return err
	}
	r.ReadsPerIncr, r.WritesPerIncr = r.IncrementReads+r.RollupReads, r.IncrementWrites+r.RollupWrites
	r.HotWrites, r.HotPeak, r.HotMinGapMS = len(hotWrites), peakInASecond(hotWrites), ms(minGap(hotWrites))
	if len(hot.Acks) > 0 {
		r.HotMaxGapMS = ms(maxGap(append(hotWrites, hot.Acks[0].Committed)))
	}
	r.Boundary = run.jobs

	// The truth: each post's increments, by commit time.
	commits := make([][]time.Time, len(run.ids))
	for _, a := range hot.Acks {
		commits[0] = append(commits[0], a.Committed)
	}
	for _, a := range quiet.Acks {
		commits[1+a.Counter] = append(commits[1+a.Counter], a.Committed)
	}
	lay, err := windowsLayout(run.mode, e.o.Calendar)
	if err != nil {
		return err
	}
	ws := lay.WindowsOf(collPosts + "/" + winHot)
	for from := 0; from < len(run.ids); from += 500 {
		var refs []*firestore.DocumentRef
		for _, id := range run.ids[from:min(from+500, len(run.ids))] {
			doc, _ := target(collPosts, id)
			refs = append(refs, e.reader.Doc(doc))
		}
		snaps, err := e.reader.GetAll(ctx, refs)
		if err != nil {
			return err
		}
		for i, s := range snaps {
			checkWindows(r, lay, ws, max(e.o.Window, time.Duration(r.HotMaxGapMS*float64(time.Millisecond))), s.Data(), commits[from+i])
		}
	}
	return nil
}

// rollupWindows adds what every Rollup instance read and wrote, per
// increment of n, to r, and gives the times of the hot post's folds.
func (e *env) rollupWindows(r *report.WindowsMode, n float64) ([]time.Time, error) {
	var hotWrites []time.Time
	for _, in := range e.instances {
		st, err := in.stats()
		if err != nil {
			return nil, err
		}
		r.RollupReads += float64(st.Reads) / n
		r.RollupWrites += float64(st.Writes) / n
		folds, err := in.folds()
		if err != nil {
			return nil, err
		}
		for _, f := range folds {
			if f.Counter == collPosts+"/"+winHot+".views" {
				hotWrites = append(hotWrites, f.At)
			}
		}
	}
	return hotWrites, nil
}

// checkWindows checks one post's data against its increments' commit
// times: its total, and with windows its series, windows and trend.
func checkWindows(r *report.WindowsMode, lay core.Layout, ws []bytime.Window, span time.Duration, data map[string]any, commits []time.Time) {
	if v, _ := data["views"].(int64); v != int64(len(commits)) {
		r.PostsOff++
	}
	asOf := lay.AsOf(data)
	if asOf.IsZero() || len(ws) == 0 {
		return
	}
	in := func(from, to time.Time) (n int64) { // commits in [from, to]
		for _, t := range commits {
			if !t.Before(from) && !t.After(to) {
				n++
			}
		}
		return n
	}
	for _, w := range ws {
		switch w.Kind {
		case bytime.KindTrend:
			if S, ok := data[w.Field].(float64); ok {
				checkTrend(r, w, S, asOf, span, commits)
			}
		default:
			st := core.StateOf(lay, data, w.Field)
			if st.Bucket.IsZero() {
				continue
			}
			if w.Kind == bytime.KindPer {
				for k, got := range st.Series {
					b, err := time.Parse(time.RFC3339, k)
					if err != nil {
						continue
					}
					r.Buckets++
					if d := got - in(b, w.Unit.Next(b, lay.Zone).Add(-time.Nanosecond)); d != 0 {
						r.BucketsOff++
						r.MaxBucketOff = max(r.MaxBucketOff, abs(d))
					}
				}
			}
			from := st.Bucket
			if w.Kind == bytime.KindOver {
				for range w.N - 1 {
					from = w.Unit.Prev(from, lay.Zone)
				}
			}
			if v, _ := data[w.Field].(int64); v != in(from, asOf) {
				r.WindowsOff++
			}
		}
	}
}

func abs(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

// peakInASecond is the most of ts in any one second.
func peakInASecond(ts []time.Time) int {
	ts = slices.SortedFunc(slices.Values(ts), time.Time.Compare)
	best, lo := 0, 0
	for hi := range ts {
		for ts[hi].Sub(ts[lo]) >= time.Second {
			lo++
		}
		best = max(best, hi-lo+1)
	}
	return best
}

// minGap is the least time between two of ts; 0 with fewer than two.
// maxGap is the most time between two of ts.
func maxGap(ts []time.Time) time.Duration {
	ts = slices.SortedFunc(slices.Values(ts), time.Time.Compare)
	var gap time.Duration
	for i := 1; i < len(ts); i++ {
		gap = max(gap, ts[i].Sub(ts[i-1]))
	}
	return gap
}

func minGap(ts []time.Time) time.Duration {
	ts = slices.SortedFunc(slices.Values(ts), time.Time.Compare)
	var gap time.Duration
	for i := 1; i < len(ts); i++ {
		if d := ts[i].Sub(ts[i-1]); i == 1 || d < gap {
			gap = d
		}
	}
	return gap
}

// checkTrend holds the trend S of window w, as of asOf, to the exact
// decayed sum of the commits by then.
func checkTrend(r *report.WindowsMode, w bytime.Window, S float64, asOf time.Time, span time.Duration, commits []time.Time) {
	exact := math.Inf(-1)
	for _, t := range commits {
		if !t.After(asOf) {
			exact = bytime.TrendAdd(exact, 1, t, w.HalfLife)
		}
	}
	r.Trends++
	if !math.IsInf(exact, -1) {
		r.TrendMaxError = max(r.TrendMaxError, math.Abs(math.Exp2(S-exact)-1))
	}
	r.TrendBound = math.Exp2(span.Seconds()/w.HalfLife.Seconds()) - 1
}
