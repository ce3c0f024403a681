package report

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// Jobs is the report of bench --windows --due: the boundary job and
// Reconcile over many documents, their parts run some at a time.
type Jobs struct {
	Started  time.Time `json:"started"`
	PartSize int       `json:"part_size"`
	Runs     []JobRun  `json:"runs"`
}

// JobRun is one job over Due documents, Parallel parts at a time.
type JobRun struct {
	Job      string  `json:"job"` // windows or reconcile
	Due      int     `json:"due"`
	Parallel int     `json:"parallel"` // parts run at once: invocations
	Fanout   string  `json:"fanout"`   // in-process: parts run Parallel at a time by the bench; pubsub: pushed to the stack's Reconcile?part
	Parts    int     `json:"parts"`
	Moved    int     `json:"moved"`
	Failed   int     `json:"failed"`
	Left     int     `json:"left"`              // documents still due after the job (the windows job): 0, unless Stopped
	Stopped  bool    `json:"stopped,omitempty"` // the run's budget ended before its parts did: its figures are of what it moved by then
	ListMS   float64 `json:"list_ms"`           // the listing: the dispatcher's part
	TookMS   float64 `json:"took_ms"`           // from the job's start to its last part's end
	DocsPerS float64 `json:"docs_per_s"`        // moved per second of TookMS
	Reads    float64 `json:"reads_per_doc"`
	Writes   float64 `json:"writes_per_doc"`
	Error    string  `json:"error,omitempty"`
}

// WriteTable prints the runs, a line each.
func (r *Jobs) WriteTable(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "job\tdue\tparts at once\tparts\tmoved\tfailed\tleft due\tlisting\ttook\tdocs/s\treads/doc\twrites/doc\t\n")
	for _, x := range r.Runs {
		at, reads, writes := fmt.Sprint(x.Parallel), fmt.Sprintf("%.2f", x.Reads), fmt.Sprintf("%.2f", x.Writes)
		if x.Fanout == "pubsub" {
			at, reads, writes = "Pub/Sub", "-", "-" // the functions' operations are not counted
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%d\t%d\t%d\t%.1f s\t%.1f s\t%.0f\t%s\t%s\t\n", x.Job, x.Due, at, x.Parts,
			x.Moved, x.Failed, x.Left, x.ListMS/1000, x.TookMS/1000, x.DocsPerS, reads, writes)
	}
	tw.Flush()
	for _, x := range r.Runs {
		if x.Stopped {
			fmt.Fprintf(w, "%s, %d due, %d at once: stopped at the run's budget; its docs/s are of what it moved by then\n", x.Job, x.Due, x.Parallel)
		}
		if x.Error != "" {
			fmt.Fprintf(w, "%s, %d due, %d at once: %s\n", x.Job, x.Due, x.Parallel, x.Error)
		}
	}
}

// WriteJSON writes the report to path.
func (r *Jobs) WriteJSON(path string) error { return writeJSON(path, r) }
