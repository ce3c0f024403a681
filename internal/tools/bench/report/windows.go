package report

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"
)

// Windows is every figure of one bench.RunWindows.
type Windows struct {
	Started    time.Time     `json:"started"`
	Options    Options       `json:"options"`
	Quiet      int           `json:"quiet_posts"`
	HotRate    float64       `json:"hot_rate"`
	Boundaries int           `json:"boundaries"`
	Windows    string        `json:"windows"` // the windows mode's declarations
	Modes      []WindowsMode `json:"modes"`
}

// WindowsMode is what one mode of bench.RunWindows did.
type WindowsMode struct {
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
	// increments it holds: TrendBound, for the longer of one fold spacing and
	// the most time between two folds of the hot post).
	Buckets       int        `json:"buckets_checked"`
	BucketsOff    int        `json:"buckets_off"`
	MaxBucketOff  int64      `json:"max_abs_bucket_minus_truth"`
	WindowsOff    int        `json:"windows_off"`
	Trends        int        `json:"trends_checked"`
	TrendMaxError float64    `json:"trend_max_relative_error"`
	TrendBound    float64    `json:"trend_error_bound"`
	Boundary      []Boundary `json:"boundary_jobs,omitempty"`
}

// Boundary is one run of the boundary job.
type Boundary struct {
	Boundary time.Time `json:"boundary"`
	Due      int       `json:"due"`
	Moved    int       `json:"moved"`
	Errors   int       `json:"errors"`
	TookMS   float64   `json:"took_ms"`
	Reads    int64     `json:"reads"`
	Writes   int64     `json:"writes"`
	Error    string    `json:"error,omitempty"`
}

// WriteTable prints the report as tables.
func (rep *Windows) WriteTable(out io.Writer) {
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
func (rep *Windows) WriteJSON(path string) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
