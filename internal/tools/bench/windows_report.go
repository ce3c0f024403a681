package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"text/tabwriter"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/counting"
)

// WindowsReport is every figure of one RunWindows.
type WindowsReport struct {
	Started    time.Time       `json:"started"`
	Options    OptionsJSON     `json:"options"`
	Quiet      int             `json:"quiet_posts"`
	HotRate    float64         `json:"hot_rate"`
	Boundaries int             `json:"boundaries"`
	Windows    string          `json:"windows"` // the windows mode's declarations
	Modes      []WindowsResult `json:"modes"`
}

// WindowsResult is what one mode of RunWindows did.
type WindowsResult struct {
	Mode       string  `json:"mode"`
	Increments int64   `json:"increments"` // acknowledged: the hot post's and the quiet posts'
	Errors     int64   `json:"errors"`
	HotPerSec  float64 `json:"hot_increments_per_second"`
	SettleMS   float64 `json:"settle_ms"`

	// What an increment cost: Increment's reads and writes, and every
	// Rollup instance's; the boundary job's are in Boundary.
	IncrementReads  float64 `json:"increment_reads_per_increment"`
	IncrementWrites float64 `json:"increment_writes_per_increment"`
	RollupReads     float64 `json:"rollup_reads_per_increment"`
	RollupWrites    float64 `json:"rollup_writes_per_increment"`
	ReadsPerIncr    float64 `json:"reads_per_increment"`
	WritesPerIncr   float64 `json:"writes_per_increment"`

	// The hot post's writes by the folds: how many, the most in any one
	// second, and the least time between two.
	HotWrites   int     `json:"hot_parent_writes"`
	HotPeak     int     `json:"hot_parent_writes_peak_in_one_second"`
	HotMinGapMS float64 `json:"hot_parent_writes_min_gap_ms"`
	// HotMaxGapMS: the most time between two folds of the hot post (or
	// from its first increment to its first fold), which is how far a
	// fold's increments can be from the mean commit time it weighs them at.
	HotMaxGapMS float64 `json:"hot_parent_writes_max_gap_ms"`

	// Every post's views against the increments acknowledged.
	PostsOff int `json:"posts_whose_total_is_off"`

	// Of the windows mode: each closed bucket of every post's per-minute
	// series against the increments that committed in it (BucketsOff:
	// those that differ; MaxBucketOff, the most |bucket - truth|); each
	// post's per and over window as of its fold's read time; and each
	// post's trend against the exact decayed sum of its increments at
	// that time (TrendMaxError: the most |score / exact - 1|; a fold
	// weighs its increments at their mean commit time, not each one's,
	// which errs by at most 2^(span/half-life) - 1 for the span of the
	// increments it holds: TrendBound, for the longer of one window and
	// the most time between two folds of the hot post).
	Buckets       int           `json:"buckets_checked"`
	BucketsOff    int           `json:"buckets_off"`
	MaxBucketOff  int64         `json:"max_abs_bucket_minus_truth"`
	WindowsOff    int           `json:"windows_off"`
	Trends        int           `json:"trends_checked"`
	TrendMaxError float64       `json:"trend_max_relative_error"`
	TrendBound    float64       `json:"trend_error_bound"`
	Boundary      []BoundaryRun `json:"boundary_jobs,omitempty"`
}

// BoundaryRun is one run of the boundary job.
type BoundaryRun struct {
	Boundary time.Time `json:"boundary"`
	Due      int       `json:"due"`
	Moved    int       `json:"moved"`
	Errors   int       `json:"errors"`
	TookMS   float64   `json:"took_ms"`
	Reads    int64     `json:"reads"`
	Writes   int64     `json:"writes"`
	Error    string    `json:"error,omitempty"`
}

// measureWindows fills r from run: the load's answers, what it cost, the
// hot post's writes, and, in the windows mode, every post's series,
// windows and trend against the truth.
func (e *env) measureWindows(ctx context.Context, r *WindowsResult, run *winRun) error {
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
	inc := e.ops[ModeTally]
	r.IncrementReads, r.IncrementWrites = float64(inc.Reads())/n, float64(inc.Writes())/n
	var hotWrites []time.Time
	for _, in := range e.instances {
		st, err := in.stats()
		if err != nil {
			return err
		}
		r.RollupReads += float64(st.Reads) / n
		r.RollupWrites += float64(st.Writes) / n
		folds, err := in.folds()
		if err != nil {
			return err
		}
		for _, f := range folds {
			if f.Counter == collPosts+"/"+winHot+".views" {
				hotWrites = append(hotWrites, f.At)
			}
		}
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
	lay := windowsLayout(run.mode)
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

// checkWindows checks one post's data against its increments' commit
// times: its total, and with windows its series, windows and trend.
func checkWindows(r *WindowsResult, lay counting.Layout, ws []counting.Window, span time.Duration, data map[string]any, commits []time.Time) {
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
		case counting.KindTrend:
			S, ok := data[w.Field].(float64)
			if !ok {
				continue
			}
			exact := math.Inf(-1)
			for _, t := range commits {
				if !t.After(asOf) {
					exact = counting.TrendAdd(exact, 1, t, w.HalfLife)
				}
			}
			r.Trends++
			if !math.IsInf(exact, -1) {
				r.TrendMaxError = max(r.TrendMaxError, math.Abs(math.Exp2(S-exact)-1))
			}
			r.TrendBound = math.Exp2(span.Seconds()/w.HalfLife.Seconds()) - 1
		default:
			st := counting.StateOf(lay, data, w.Field)
			if st.Bucket.IsZero() {
				continue
			}
			if w.Kind == counting.KindPer {
				for k, got := range st.Series {
					b, err := time.Parse(time.RFC3339, k)
					if err != nil {
						continue
					}
					r.Buckets++
					if d := got - in(b, w.Unit.Next(b, nil).Add(-time.Nanosecond)); d != 0 {
						r.BucketsOff++
						r.MaxBucketOff = max(r.MaxBucketOff, abs(d))
					}
				}
			}
			from := st.Bucket
			if w.Kind == counting.KindOver {
				for range w.N - 1 {
					from = w.Unit.Prev(from, nil)
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

// WriteTable prints the report as tables.
func (rep *WindowsReport) WriteTable(out io.Writer) {
	fmt.Fprintf(out, "counts by time: 1 hot post at %.0f views/s, %d quiet posts with one view each in the first minute, %d Rollup instance(s), %d boundaries\n",
		rep.HotRate, rep.Quiet, rep.Options.Instances, rep.Boundaries)
	fmt.Fprintf(out, "windows mode declares: %s\n\n", rep.Windows)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "mode\tincrements\terrors\thot/s\treads/incr\twrites/incr\t(Increment r/w)\t(Rollup r/w)\thot writes\tpeak/s\tgap ms min/max\ttotals off\t")
	for _, m := range rep.Modes {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.0f\t%.3f\t%.3f\t%.3f/%.3f\t%.3f/%.3f\t%d\t%d\t%.0f/%.0f\t%d\t\n", m.Mode, m.Increments, m.Errors, m.HotPerSec,
			m.ReadsPerIncr, m.WritesPerIncr, m.IncrementReads, m.IncrementWrites, m.RollupReads, m.RollupWrites, m.HotWrites, m.HotPeak, m.HotMinGapMS, m.HotMaxGapMS, m.PostsOff)
	}
	tw.Flush()
	for _, m := range rep.Modes {
		if len(m.Boundary) == 0 {
			continue
		}
		fmt.Fprintf(out, "\nboundary job (%s):\n", m.Mode)
		tw = tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "boundary\tdue\tmoved\terrors\ttook ms\tdocs/s\treads/doc\twrites/doc\t")
		for _, b := range m.Boundary {
			per := float64(max(b.Due, 1))
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%.0f\t%.0f\t%.2f\t%.2f\t%s\n", b.Boundary.UTC().Format("15:04"), b.Due, b.Moved, b.Errors, b.TookMS,
				float64(b.Due)/max(b.TookMS/1000, 0.001), float64(b.Reads)/per, float64(b.Writes)/per, b.Error)
		}
		tw.Flush()
		fmt.Fprintf(out, "\nexactness (%s): %d closed buckets, %d off (max |bucket - truth| %d); per and over windows off: %d; %d trends, max |score/exact - 1| %.2g (bound %.2g)\n",
			m.Mode, m.Buckets, m.BucketsOff, m.MaxBucketOff, m.WindowsOff, m.Trends, m.TrendMaxError, m.TrendBound)
	}
}

// WriteJSON writes the report to path.
func (rep *WindowsReport) WriteJSON(path string) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
