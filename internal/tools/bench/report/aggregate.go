package report

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// Aggregate is every figure of one bench.RunAggregate.
type Aggregate struct {
	Started time.Time       `json:"started"`
	Options Options         `json:"options"`
	Modes   []AggregateMode `json:"modes"`
}

// AggregateMode is what one way of keeping a post's count of comments
// did under the load.
type AggregateMode struct {
	Mode        string `json:"mode"`
	Description string `json:"description"`
	Existing    int    `json:"existing"` // comments each post had before the load

	Seconds       float64 `json:"seconds"`
	Changes       int64   `json:"changes"` // comments written and acknowledged: created, edited and deleted
	Creates       int64   `json:"creates"`
	Edits         int64   `json:"edits"`
	Deletes       int64   `json:"deletes"`
	Errors        int64   `json:"errors"` // changes that failed
	ChangesPerSec float64 `json:"changes_per_second"`
	LatencyP50    float64 `json:"change_latency_p50_ms"`
	LatencyP99    float64 `json:"change_latency_p99_ms"`

	// What a change cost in all: the comment's own write, and every read
	// and write of what keeps the count (tally's Rollup instances, the
	// trigger). Reads of the count by readers are not in it: a reader of
	// a kept count reads one document, a query's reader pays ReadsPerView.
	ReadsPerChange  float64  `json:"reads_per_change"`
	WritesPerChange float64  `json:"writes_per_change"`
	ReadsPerView    *float64 `json:"reads_per_view,omitempty"` // query: reads of one count() of a post's comments, at the end

	// TotalMinusTruth is the kept counts, summed over the posts, minus
	// Firestore's own count() of their comments, at the end; PostsOff, the
	// posts whose count is not their count().
	TotalMinusTruth int64 `json:"total_minus_truth"`
	PostsOff        int   `json:"posts_off"`

	// ParentWrites is the writes of posts by what keeps the counts;
	// HotParentSeries, the most writes to one post in each second from the
	// load's start until the counts settled; HotParentPeak, its most.
	ParentWrites    int64 `json:"parent_writes"`
	HotParentPeak   int   `json:"hot_parent_writes_per_second"`
	HotParentSeries []int `json:"hot_parent_series,omitempty"`

	// Visible is, for each comment created or deleted, the time from its
	// commit (a delete's: its answer) to the commit of the first write of
	// its post whose count includes it; Unseen, those no write included.
	Visible *Spread `json:"visible,omitempty"`
	Unseen  int     `json:"unseen"`

	SettleWait    float64   `json:"settle_wait_ms"`
	SettleBounded bool      `json:"settle_bounded"`
	Backfill      *Backfill `json:"backfill,omitempty"`
	PartsMost     int       `json:"parts_most,omitempty"` // tally: the parts of the post with the most comments, at the end
	Events        *int64    `json:"events,omitempty"`
	Duplicated    *int64    `json:"duplicated,omitempty"`
	Delayed       *int64    `json:"delayed,omitempty"`
}

// Backfill is what computing every post's count from scratch cost tally,
// before the load, as `tally reconcile` does for an app that starts using
// it.
type Backfill struct {
	Seconds      float64 `json:"seconds"`
	Reads        int64   `json:"reads"`
	Writes       int64   `json:"writes"`
	ReadsPerPost float64 `json:"reads_per_post"`
}

// WriteJSON writes the report to path.
func (r *Aggregate) WriteJSON(path string) error { return writeJSON(path, r) }

// WriteTable prints the modes side by side.
func (r *Aggregate) WriteTable(w io.Writer) {
	o := r.Options
	fmt.Fprintf(w, "comments=count(comments) on %d posts of %d comments each, %.0f changes/s (%s) for %.0fs, %d Rollup instance(s), %.0f%% of events duplicated, %.0f%% delayed\n\n",
		o.Counters, o.Existing, o.Rate, o.Popularity, o.Seconds, o.Instances, 100*o.DuplicateRate, 100*o.DelayRate)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	row := rowsOf(tw, r.Modes)
	row("", func(m AggregateMode) string { return m.Mode })
	row("changes (create/edit/delete)", func(m AggregateMode) string {
		return fmt.Sprintf("%d (%d/%d/%d)", m.Changes, m.Creates, m.Edits, m.Deletes)
	})
	row("changes/s", func(m AggregateMode) string { return fmt.Sprintf("%.0f", m.ChangesPerSec) })
	row("failed changes", func(m AggregateMode) string { return fmt.Sprint(m.Errors) })
	row("reads per change", func(m AggregateMode) string { return fmt.Sprintf("%.2f", m.ReadsPerChange) })
	row("writes per change", func(m AggregateMode) string { return fmt.Sprintf("%.2f", m.WritesPerChange) })
	row("reads per view of a count", func(m AggregateMode) string {
		if m.ReadsPerView != nil {
			return fmt.Sprintf("%.2f", *m.ReadsPerView)
		}
		return "1 (the post)"
	})
	row("total minus truth", func(m AggregateMode) string { return fmt.Sprintf("%+d", m.TotalMinusTruth) })
	row("posts off", func(m AggregateMode) string { return fmt.Sprint(m.PostsOff) })
	row("most writes to one post in a second", func(m AggregateMode) string {
		if m.Mode == AggQuery {
			return "-"
		}
		return fmt.Sprint(m.HotParentPeak)
	})
	row("visible p50 / p99 ms", func(m AggregateMode) string {
		if m.Visible == nil {
			return "- (not kept)"
		}
		return fmt.Sprintf("%.0f / %.0f", m.Visible.P50, m.Visible.P99)
	})
	row("changes never shown", func(m AggregateMode) string { return fmt.Sprint(m.Unseen) })
	row("settled after ms", func(m AggregateMode) string {
		s := fmt.Sprintf("%.0f", m.SettleWait)
		if m.SettleBounded {
			s += " (cut short)"
		}
		return s
	})
	row("backfill reads per post", func(m AggregateMode) string {
		if m.Backfill == nil {
			return "-"
		}
		return fmt.Sprintf("%.2f", m.Backfill.ReadsPerPost)
	})
	row("parts of the largest post", func(m AggregateMode) string {
		if m.Mode != AggTally {
			return "-"
		}
		return fmt.Sprint(m.PartsMost)
	})
	tw.Flush()
}
