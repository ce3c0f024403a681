package report

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
)

// Title is the run's parameters, in one line.
func (r *Load) Title() string {
	o := r.Options
	rate := "unlimited"
	if o.Rate > 0 {
		rate = fmt.Sprintf("%.0f/s", o.Rate)
	}
	delivery := "events delivered by the emulator's triggers"
	if o.Delivery == DeliveryDirect {
		delivery = "events posted by the bench from each commit (direct), concurrently, as Eventarc pushes them"
	}
	load := fmt.Sprintf("%s popularity", o.Popularity)
	if o.RestMS > 0 {
		load += fmt.Sprintf(", each client resting up to %.0fms after each answer", o.RestMS)
	}
	if o.Feed {
		load += ", one listener on the collection"
	} else if o.Listeners {
		load += ", a listener on every counter"
	}
	if o.Keys {
		load += ", each increment with an Idempotency-Key"
	}
	if o.ClientWrites {
		load += ", tally's shards written by the client (no Increment)"
	}
	if o.InDocument {
		load += ", a quiet document's increments written into it (--in-document)"
	}
	if o.IncrementBilling == BillingInstance {
		load += ", Increment billed by instance"
	}
	if o.IncrementCPU > 0 && o.IncrementCPU < 1 {
		load += fmt.Sprintf(", tally's Increment on instances of %g vCPU taking one request at a time", o.IncrementCPU)
	}
	if o.Burst {
		load += ", each counter quiet, then at the rate at once (burst)"
	}
	counters := fmt.Sprintf("%d counter(s)", o.Counters)
	if o.Fields > 0 {
		counters = fmt.Sprintf("%d document(s) with %d count(s) each in tally's and plain's modes (%d counters; other modes: %d)", o.Counters, o.Fields, o.Counters*o.Fields, o.Counters)
	}
	if o.Timed {
		counters += ", with a day's and 7 days' windows of f0 and a trend of all (tally's)"
	}
	shards := fmt.Sprintf(" x %d shards", o.Shards)
	if o.Shards == 0 {
		shards = ", new (1 shard, growing)"
	}
	firestore := ""
	if o.Contention > 0 {
		firestore = fmt.Sprintf("; contention stand-in past %g writes/s a document", o.Contention)
	}
	return fmt.Sprintf("%s%s, %d workers, rate %s, %s, %gs per mode, window %.0fms, %d Increment and %d tally Rollup instance(s), "+
		"events duplicated %.0f%%, delayed %.0f%% (up to %.0fms); %s%s; settle bound %.0fs; priced at %s; functions at %s",
		counters, shards, o.Workers, rate, load, o.Seconds, o.WindowMS, max(1, o.IncrementInstances), o.Instances, 100*o.DuplicateRate, 100*o.DelayRate,
		o.MaxDelayMS, delivery, firestore, o.SettleSeconds, o.Prices, o.FunctionPrices)
}

// WriteTable prints the report's main figures with one column per mode,
// a table that fits a screen: "-" where a figure does not apply (a row
// that applies to no mode is left out), "never" where a total never
// became exact. The JSON (WriteJSON) holds every
// figure.
func (r *Load) WriteTable(w io.Writer) {
	fmt.Fprintf(w, "%s\n\n", r.Title())
	if warning := r.Saturated(); warning != "" {
		fmt.Fprintf(w, "%s\n\n", warning)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	row := rowsOf(tw, r.Modes)
	row("", func(m Mode) string { return m.Mode })
	loadRows(row)
	parentRows(row)
	if r.hasVisible() {
		row("visible p50 / p90 / p99 ms", func(m Mode) string { return visible(m.Visible, func(v *Visible) *Spread { return v.All }) })
	}
	row("total - acknowledged", func(m Mode) string { return fmt.Sprintf("%+d", m.Drift) })
	costRows(row)
	row("events (duplicated, delayed)", func(m Mode) string {
		if m.Events == nil {
			return "-"
		}
		return fmt.Sprintf("%d (%d, %d)", *m.Events, *m.Duplicated, *m.Delayed)
	})
	tw.Flush()
	if note := r.plainNote(); note != "" {
		fmt.Fprintf(w, "\n%s\n", note)
	}
	fmt.Fprintln(w, "\nEvery figure, for each mode and each Rollup instance, is in --json FILE (docs/bench.md lists them).")
}

// rowsOf prints rows of a table to tw, a column for each of cols: a
// row's label, then what f makes of each column. A row whose figure
// applies to no column ("-" in each) is left out.
func rowsOf[T any](tw io.Writer, cols []T) func(label string, f func(T) string) {
	return func(label string, f func(T) string) {
		cells := []string{label}
		applies := false
		for _, c := range cols {
			cell := f(c)
			applies = applies || cell != "-"
			cells = append(cells, cell)
		}
		if applies {
			fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
		}
	}
}

// plainNote says, where plain wrote one document more than once a second
// on the emulator alone, what Firestore would have made of it: the
// emulator takes every write to one document, Firestore about one a
// second.
func (r *Load) plainNote() string {
	if r.Options.Contention > 0 || !slices.ContainsFunc(r.Modes, func(m Mode) bool { return m.Mode == ModePlain && m.HotDocPerS > 1 }) {
		return ""
	}
	return "plain: the emulator takes every write to one document; Firestore sustains about 1 a second on one document,\n" +
		"so plain would take about 1 increment a second there, and stall or refuse the rest (--contention 10 puts a stand-in for it in front)."
}

// rowFunc writes one row of the table: its label, and each mode's cell.
type rowFunc func(label string, f func(m Mode) string)

// loadRows: what the load got, and how hot the hottest shard ran.
func loadRows(row rowFunc) {
	row("increments/s", func(m Mode) string { return fmt.Sprintf("%.0f", m.IncrPerSec) })
	row("  ratio to raw client", func(m Mode) string { return Maybe("%.2f", m.RatioToRaw) })
	row("  latency p50 / p99 ms", func(m Mode) string { return fmt.Sprintf("%.1f / %.1f", m.LatencyP50, m.LatencyP99) })
	row("  answered other than 200", func(m Mode) string { return fmt.Sprint(m.Errors) })
	row("hottest shard writes/s", func(m Mode) string { return fmt.Sprintf("%.1f", m.HotDocPerS) })
	row("  most in one second", func(m Mode) string { return fmt.Sprint(m.HotShardPeak) })
}

// parentRows: the writes of the parents, and how far each total lagged.
func parentRows(row rowFunc) {
	row("parent writes/s", func(m Mode) string { return Maybe("%.2f", m.ParentPerS) })
	row("  to one parent, most in one second", func(m Mode) string { return Maybe("%d", m.ParentPeak) })
	row("rollup lag p50 / p99 ms", func(m Mode) string {
		if m.LagP50 == nil {
			return "-"
		}
		return fmt.Sprintf("%.0f / %.0f", *m.LagP50, *m.LagP99)
	})
	row("  last increment to exact ms", func(m Mode) string {
		if m.HasRollup && m.SettleLag == nil {
			return "never"
		}
		return Maybe("%.0f", m.SettleLag)
	})
}

// costRows: Firestore's operations per increment, the functions'
// requests and billable time (Increment + Rollup), and their prices.
func costRows(row rowFunc) {
	row("Firestore reads/increment", func(m Mode) string { return fmt.Sprintf("%.3f", m.ReadsPerIncr) })
	row("Firestore writes/increment", func(m Mode) string { return fmt.Sprintf("%.3f", m.WritesPerIncr) })
	row("  of which verifies", func(m Mode) string { return Maybe("%.3f", m.VerifiesPerIncr) })
	row("written into the document, share", func(m Mode) string { return Maybe("%.3f", m.InDocumentShare) })
	row("function requests/increment", func(m Mode) string {
		return fmt.Sprintf("%.2f + %.2f", m.Bill.IncrementRequests, m.Bill.RollupRequests)
	})
	row("billed instance-s / 1,000 increments", func(m Mode) string {
		return fmt.Sprintf("%.2f + %.2f", m.Bill.IncrementSeconds, m.Bill.RollupSeconds)
	})
	row("Rollup CPU-s used / 1,000 increments", func(m Mode) string { return Maybe("%.3f", m.Bill.RollupCPUSeconds) })
	row("USD per million, Firestore", func(m Mode) string { return fmt.Sprintf("%.2f", m.Bill.Firestore) })
	row("requests, compute, events", func(m Mode) string {
		return fmt.Sprintf("%.2f + %.2f + %.2f", m.Bill.Requests, m.Bill.Compute, m.Bill.Events)
	})
	row("USD per million increments, all in", func(m Mode) string { return fmt.Sprintf("%.2f", m.Bill.Total) })
}

// Saturated says, if so, that the machine could not offer the load: the
// raw client, which writes the shards and nothing else, reached less than
// 90% of the rate asked for. Every mode then ran slower than asked, and
// lags and totals not yet exact say more of the machine than of tally.
// "" if the raw client kept up, or did not run, or no rate was set.
func (r *Load) Saturated() string {
	if r.Options.Rate <= 0 {
		return ""
	}
	for _, m := range r.Modes {
		if m.Mode == ModeRaw && m.IncrPerSec < 0.9*r.Options.Rate {
			return fmt.Sprintf("this machine could not keep up: the raw client wrote %.0f increments/s of the %.0f/s asked for (%.0f%%); "+
				"every mode ran slower than asked, and its lags and totals not yet exact are as much the machine's as tally's "+
				"(docs/bench.md: how far figures move between machines)", m.IncrPerSec, r.Options.Rate, 100*m.IncrPerSec/r.Options.Rate)
		}
	}
	return ""
}

// hasVisible reports whether any mode measured visible latency.
func (r *Load) hasVisible() bool {
	for _, m := range r.Modes {
		if m.Visible != nil {
			return true
		}
	}
	return false
}

// visible formats one spread of a mode's visible latency.
func visible(v *Visible, pick func(*Visible) *Spread) string {
	if v == nil {
		return "-"
	}
	s := pick(v)
	if s == nil {
		return "none"
	}
	return fmt.Sprintf("%.0f / %.0f / %.0f", s.P50, s.P90, s.P99)
}

// Maybe formats *v, or "-" when it is nil.
func Maybe[T any](format string, v *T) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf(format, *v)
}

// WriteJSON writes every figure to path.
func (r *Load) WriteJSON(path string) error { return writeJSON(path, r) }

// writeJSON writes v to path, indented.
func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
