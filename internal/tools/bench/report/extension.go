package report

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// The modes of the extension's bench: tally's own clients (through
// Increment), the firestore-counter extension's clients with tally's
// Rollup moving their shards, and the same beside a stand-in for the
// extension's own workers, as during a switch.
const (
	ModeExtension       = "extension"
	ModeExtensionWorker = "extension+worker"
)

// Extension is a run of the extension's bench.
type Extension struct {
	Started time.Time        `json:"started"`
	Options ExtensionOptions `json:"options"`
	Modes   []ExtensionMode  `json:"modes"`
}

// ExtensionOptions are the run's parameters.
type ExtensionOptions struct {
	Clients       int            `json:"clients"`
	Documents     int            `json:"documents"`
	Rate          float64        `json:"rate"`
	Seconds       float64        `json:"seconds_per_mode"`
	Instances     int            `json:"rollup_instances"`
	WindowMS      float64        `json:"window_ms"`
	DuplicateRate float64        `json:"duplicate_rate"`
	DelayRate     float64        `json:"delay_rate"`
	Prices        Prices         `json:"prices"`
	Functions     FunctionPrices `json:"function_prices"`
}

// ExtensionMode is one mode's figures. A client's view is what it shows
// at each consistent snapshot of what it listens to (the document, its
// shard and its partials, as the extension's clients do; the document,
// and its own increments since as_of, for tally's); the truth at a
// snapshot is the increments committed by its read time.
type ExtensionMode struct {
	Mode       string  `json:"mode"`
	Acked      int64   `json:"acknowledged"`
	Errors     int64   `json:"errors"`
	IncrPerSec float64 `json:"increments_per_second"`
	LatencyP50 float64 `json:"latency_p50_ms"`
	LatencyP99 float64 `json:"latency_p99_ms"`
	// Total is what the documents hold after the settle; Left what their
	// shards and partials still hold then.
	Total int64 `json:"total"`
	Left  int64 `json:"left_in_shards"`
	Drift int64 `json:"total_minus_acked"`
	// SettleMS is the last increment's answer to the documents holding
	// every one; nil if they never did within the settle bound.
	SettleMS *float64 `json:"last_increment_to_exact_ms"`

	ParentWritesPerSec float64 `json:"parent_writes_per_second"`
	ParentMostInSecond int     `json:"parent_most_writes_in_one_second"`
	WorkerWrites       int     `json:"worker_parent_writes"` // of those, the extension's workers'

	Views     int64   `json:"views"`
	Above     int64   `json:"views_above_truth"`
	MaxAbove  int64   `json:"most_above_truth"`
	Below     int64   `json:"views_below_truth"`
	MeanBelow float64 `json:"mean_below_truth"` // of the views below it
	MaxBelow  int64   `json:"most_below_truth"`
	// StaleP50 and StaleP99 are how old the count a view shows is: from
	// the commit of the first increment it misses to the view's read
	// time; 0 for a view that misses none.
	StaleP50 float64 `json:"stale_p50_ms"`
	StaleP99 float64 `json:"stale_p99_ms"`
	Dips     int64   `json:"dips"` // times a client's view went down
	MaxDip   int64   `json:"largest_dip"`

	ReadsPerIncr         float64 `json:"reads_per_increment"`
	WritesPerIncr        float64 `json:"writes_per_increment"` // deletes included
	DeletesPerIncr       float64 `json:"deletes_per_increment"`
	ListenerReadsPerIncr float64 `json:"listener_reads_per_increment"` // what the clients' listeners were billed
	Bill                 Bill    `json:"bill"`
}

// WriteTable prints the main figures, a column a mode.
func (r *Extension) WriteTable(w io.Writer) {
	o := r.Options
	fmt.Fprintf(w, "%d client(s) on %d document(s), rate %.0f/s, %gs per mode, window %.0fms, %d Rollup instance(s), events duplicated %.0f%%, delayed %.0f%%; priced at %s; functions at %s\n\n",
		o.Clients, o.Documents, o.Rate, o.Seconds, o.WindowMS, o.Instances, 100*o.DuplicateRate, 100*o.DelayRate, o.Prices, o.Functions)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	row := rowsOf(tw, r.Modes)
	row("", func(m ExtensionMode) string { return m.Mode })
	row("increments/s", func(m ExtensionMode) string { return fmt.Sprintf("%.0f", m.IncrPerSec) })
	row("latency p50 / p99 ms", func(m ExtensionMode) string { return fmt.Sprintf("%.1f / %.1f", m.LatencyP50, m.LatencyP99) })
	row("total - acknowledged", func(m ExtensionMode) string { return fmt.Sprintf("%+d", m.Drift) })
	row("last increment to exact ms", func(m ExtensionMode) string { return Maybe("%.0f", m.SettleMS) })
	row("parent writes/s (most in a second)", func(m ExtensionMode) string {
		return fmt.Sprintf("%.2f (%d)", m.ParentWritesPerSec, m.ParentMostInSecond)
	})
	row("client views", func(m ExtensionMode) string { return fmt.Sprintf("%d", m.Views) })
	row("above the truth (most)", func(m ExtensionMode) string { return fmt.Sprintf("%d (%d)", m.Above, m.MaxAbove) })
	row("below the truth (mean, most)", func(m ExtensionMode) string {
		return fmt.Sprintf("%.1f%% (%.1f, %d)", percentOf(m.Below, m.Views), m.MeanBelow, m.MaxBelow)
	})
	row("count shown stale p50 / p99 ms", func(m ExtensionMode) string { return fmt.Sprintf("%.0f / %.0f", m.StaleP50, m.StaleP99) })
	row("dips (largest)", func(m ExtensionMode) string { return fmt.Sprintf("%d (%d)", m.Dips, m.MaxDip) })
	row("Firestore reads/increment", func(m ExtensionMode) string { return fmt.Sprintf("%.3f", m.ReadsPerIncr) })
	row("writes (of them deletes)/increment", func(m ExtensionMode) string {
		return fmt.Sprintf("%.3f (%.3f)", m.WritesPerIncr, m.DeletesPerIncr)
	})
	row("listener reads/increment", func(m ExtensionMode) string { return fmt.Sprintf("%.2f", m.ListenerReadsPerIncr) })
	row("function requests/increment", func(m ExtensionMode) string {
		return fmt.Sprintf("%.2f + %.2f", m.Bill.IncrementRequests, m.Bill.RollupRequests)
	})
	row("USD per million, Firestore", func(m ExtensionMode) string { return fmt.Sprintf("%.2f", m.Bill.Firestore) })
	row("USD per million increments, all in", func(m ExtensionMode) string { return fmt.Sprintf("%.2f", m.Bill.Total) })
	tw.Flush()
	fmt.Fprintln(w, "\nA view is what a client shows at each consistent snapshot of what it listens to; the truth, the increments committed by then. --json FILE has every figure.")
}

func percentOf(n, of int64) float64 {
	if of == 0 {
		return 0
	}
	return 100 * float64(n) / float64(of)
}

// WriteJSON writes every figure to path.
func (r *Extension) WriteJSON(path string) error { return writeJSON(path, r) }
