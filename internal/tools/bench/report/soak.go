package report

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/tallycounters/tally/internal/tools/bridge"
)

// Soak is every figure of one bench.Soak.
type Soak struct {
	Options    SoakOptions      `json:"options"`
	Faults     []Fault          `json:"faults"`
	Seconds    float64          `json:"seconds"`
	IncrPerSec float64          `json:"increments_per_second"`
	LatencyP50 float64          `json:"latency_p50_ms"`
	LatencyP99 float64          `json:"latency_p99_ms"`
	Acked      int64            `json:"acknowledged"`
	Errors     int64            `json:"errors"`
	Answers    map[string]int64 `json:"answers"` // by HTTP status; "none": no answer
	Counters   []SoakCounter    `json:"counters"`
	Lost       int64            `json:"lost"`                // acknowledged increments missing from totals
	Extra      int64            `json:"extra"`               // totals past their acknowledged increments
	ExactAfter *float64         `json:"exact_after_load_ms"` // null: some total never became exact
	// AnsweredAfter: from the end of the load until the emulator had
	// delivered an event for every increment and each was answered; null:
	// not within the settle bound.
	AnsweredAfter *float64     `json:"events_answered_after_load_ms"`
	Bridge        bridge.Stats `json:"events"`
}

// SoakOptions is the part of bench.SoakOptions a report records.
type SoakOptions struct {
	Seconds       float64 `json:"seconds"`
	Workers       int     `json:"workers"`
	Rate          float64 `json:"rate"`
	Counters      int     `json:"counters"`
	Shards        int     `json:"shards"`
	Instances     int     `json:"rollup_instances"`
	PauseSeconds  float64 `json:"emulator_pause_seconds"`
	DownSeconds   float64 `json:"instance_down_seconds"`
	DuplicateRate float64 `json:"duplicate_rate"`
	DelayRate     float64 `json:"delay_rate"`
	MaxDelayMS    float64 `json:"max_delay_ms"`
	SettleSeconds float64 `json:"settle_bound_seconds"`
}

// Fault is one fault injected, and when, from the start of the load.
type Fault struct {
	AtSeconds float64 `json:"at_seconds"`
	What      string  `json:"what"`
}

// SoakCounter is one counter at the end.
type SoakCounter struct {
	ID    string `json:"id"`
	Acked int64  `json:"acknowledged"`
	Total int64  `json:"total"`
	Sum   int64  `json:"shards_sum"`
}

// Title is the soak's parameters, in one line.
func (r *Soak) Title() string {
	o := r.Options
	rate := "unlimited"
	if o.Rate > 0 {
		rate = fmt.Sprintf("%.0f/s", o.Rate)
	}
	return fmt.Sprintf("soak through the bench's tally mode: %d counter(s) x %d shards, %d workers, rate %s, %.0fs, %d Rollup instance(s), "+
		"events duplicated %.0f%%, delayed %.0f%% (up to %.0fms), emulator paused %.0fs, one instance down %.0fs; settle bound %.0fs",
		o.Counters, o.Shards, o.Workers, rate, o.Seconds, o.Instances, 100*o.DuplicateRate, 100*o.DelayRate, o.MaxDelayMS,
		o.PauseSeconds, o.DownSeconds, o.SettleSeconds)
}

// WriteTable prints the soak: its faults, its load, and each counter.
func (r *Soak) WriteTable(w io.Writer) {
	fmt.Fprintf(w, "%s\n\nfaults:\n", r.Title())
	for _, f := range r.Faults {
		fmt.Fprintf(w, "  %6.1fs  %s\n", f.AtSeconds, f.What)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	exact := "never"
	if r.ExactAfter != nil {
		exact = fmt.Sprintf("%.0f", *r.ExactAfter)
	}
	answered := "not within the bound"
	if r.AnsweredAfter != nil {
		answered = fmt.Sprintf("%.0f", *r.AnsweredAfter)
	}
	b := r.Bridge
	for _, row := range [][2]string{
		{"increments/s", fmt.Sprintf("%.0f", r.IncrPerSec)},
		{"latency p50 / p99 ms", fmt.Sprintf("%.1f / %.1f", r.LatencyP50, r.LatencyP99)},
		{"errors", fmt.Sprint(r.Errors)},
		{"acknowledged", fmt.Sprint(r.Acked)},
		{"lost / extra", fmt.Sprintf("%d / %d", r.Lost, r.Extra)},
		{"last increment to exact ms", exact},
		{"last increment to every event answered ms", answered},
		{"events received", fmt.Sprint(b.Received)},
		{"  duplicated, delayed", fmt.Sprintf("%d, %d", b.Duplicated, b.Delayed)},
		{"  deliveries, failed (retried)", fmt.Sprintf("%d, %d", b.Deliveries, b.Failures)},
		{"  dropped", fmt.Sprint(b.Dropped)},
	} {
		fmt.Fprintf(tw, "%s\t%s\n", row[0], row[1])
	}
	tw.Flush()
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "counter\tacknowledged\ttotal\tshards sum\ttotal - acknowledged\t")
	for _, c := range r.Counters {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%+d\t\n", c.ID, c.Acked, c.Total, c.Sum, c.Total-c.Acked)
	}
	tw.Flush()
}

// WriteJSON writes the report to path.
func (r *Soak) WriteJSON(path string) error { return writeJSON(path, r) }
