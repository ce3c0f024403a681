package report

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// Rank is bench --rank: places on a board of posts by likes, each
// sampled against the truth read from the posts at its read time.
type Rank struct {
	Started time.Time `json:"started"`
	Runs    []RankRun `json:"runs"`
}

// RankRun is one board of Docs posts under load.
type RankRun struct {
	Docs       int     `json:"docs"`
	Crowded    bool    `json:"crowded,omitempty"` // likes seeded over four cells, not by Zipf's law
	SeedMS     float64 `json:"seed_ms"`
	LoadMS     float64 `json:"load_ms"`
	Likes      int64   `json:"likes"`             // acknowledged increments during the load
	Refused    int64   `json:"refused"`           // like requests not answered 200 (none is expected)
	Refusal    string  `json:"refusal,omitempty"` // the last of them: its answer, or the error
	Gone       int64   `json:"likes_of_deleted"`  // likes of a post the churn had deleted, answered 404
	Duplicated int64   `json:"duplicated"`        // events delivered twice
	Delayed    int64   `json:"delayed"`           // events held back
	Instances  int     `json:"instances"`         // Rollup instances
	ViralFrom  int64   `json:"viral_from"`        // the viral post's first sampled rank
	ViralTo    int64   `json:"viral_to"`          // and its last
	Passed     int64   `json:"viral_passed"`      // posts it passed, between them

	RanksRead    int     `json:"ranks_read"`           // ranks read during the load (and the viral post's after it)
	Samples      int     `json:"samples"`              // of them, checked against the truth at their read times
	SampleErrors int     `json:"sample_errors"`        // samples that failed (a rank or its truth), not for want of a rank
	Exact        int     `json:"exact"`                // samples with rank_minus_truth 0 and of_minus_truth 0
	MaxOff       int64   `json:"max_rank_minus_truth"` // the largest |rank - truth| seen
	MaxOfOff     int64   `json:"max_of_minus_truth"`
	ReadsP50     int     `json:"reads_p50"` // billed reads a rank cost, as it reports them
	ReadsMax     int     `json:"reads_max"`
	OpsMax       int     `json:"ops_max"`          // operations the client sent for one rank, counted on the wire
	LagP50MS     float64 `json:"as_of_lag_p50_ms"` // how old a rank's read time was when it was read
	RankP50MS    float64 `json:"rank_p50_ms"`      // one rank's time, on the emulator

	Folds          int     `json:"folds"` // folds written
	Moves          int     `json:"moves"` // moves between cells made with them
	ExtraPerFold   float64 `json:"extra_writes_per_fold"`
	MaxExtraFold   int     `json:"max_extra_writes_one_fold"`
	SummaryMaxPerS int     `json:"summary_writes_max_per_s"` // the busiest second of the board's summary
	PostMaxPerS    int     `json:"post_writes_max_per_s"`    // of the busiest post, by tally's folds
	MoveMinGapMS   float64 `json:"move_min_gap_ms"`          // the least time between a move's two writes
	Cells          int     `json:"cells"`                    // cells occupied at the end
	Crowds         int     `json:"crowded_cells"`            // of them, cells of more than 1,000 posts
	Parts          int     `json:"crowded_parts"`            // the parts the summary cut them into

	Pages        int     `json:"pages"`          // pages of 20 read of the settled board, at offsets from the top to past the end
	PagesExact   int     `json:"pages_exact"`    // of them, every post and place as a sort of every post's likes at its read time says
	PageReadsP50 int     `json:"page_reads_p50"` // billed reads a page cost
	PageReadsMax int     `json:"page_reads_max"`
	PageP50MS    float64 `json:"page_p50_ms"` // one page's time, on the emulator

	Error string `json:"error,omitempty"`
}

// WriteTable prints each run's figures.
func (r *Rank) WriteTable(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "posts\tranks read\tchecked\texact\tmax |rank-truth|\treads p50/max\textra writes/fold\tmax one fold\tsummary w/s max\tpost w/s max\tmove gap min\tviral\t\n")
	for _, x := range r.Runs {
		fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%d\t%d / %d\t%.3f\t%d\t%d\t%d\t%.1f s\t#%d to #%d\t\n", x.Docs, x.RanksRead, x.Samples, x.Exact, x.MaxOff,
			x.ReadsP50, x.ReadsMax, x.ExtraPerFold, x.MaxExtraFold, x.SummaryMaxPerS, x.PostMaxPerS, x.MoveMinGapMS/1000, x.ViralFrom, x.ViralTo)
	}
	tw.Flush()
	for _, x := range r.Runs {
		fmt.Fprintf(w, "%d posts: seeded in %.1f s; %d likes (%d of deleted posts, %d refused) in %.1f s to %d Rollup instances (%d events duplicated, %d delayed); %d folds made %d moves; %d cells (%d crowded, in %d parts); a rank took %.0f ms (p50), its read time %.0f ms old\n",
			x.Docs, x.SeedMS/1000, x.Likes, x.Gone, x.Refused, x.LoadMS/1000, x.Instances, x.Duplicated, x.Delayed, x.Folds, x.Moves, x.Cells, x.Crowds, x.Parts, x.RankP50MS, x.LagP50MS)
		if x.Pages > 0 {
			fmt.Fprintf(w, "%d posts: %d pages of 20, %d exact, %d reads (p50), %d at most, %.0f ms (p50)\n", x.Docs, x.Pages, x.PagesExact, x.PageReadsP50, x.PageReadsMax, x.PageP50MS)
		}
		if x.Refusal != "" {
			fmt.Fprintf(w, "%d posts: the last like refused: %s\n", x.Docs, x.Refusal)
		}
		if x.Error != "" {
			fmt.Fprintf(w, "%d posts: %s\n", x.Docs, x.Error)
		}
	}
}

// WriteJSON writes the report to path.
func (r *Rank) WriteJSON(path string) error { return writeJSON(path, r) }
