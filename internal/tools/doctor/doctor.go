// Package doctor checks, on a deployment or on the local stack, what
// tally relies on there: the functions deployed and answering, with the
// settings they record; a commit verifying a document it does not write;
// an aggregation at a read time; a shard write's event reaching Rollup,
// folded within a bound; the security rules in force holding tally's
// part and the app's; the service accounts' roles no more than deploy.sh
// grants. Each check says, in one line, what holds, or what to do. It
// writes only documents of its own (tally_doctor/{run}, and one counted
// document named tally-doctor-{run}), and removes them.
package doctor

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/counter"
	"github.com/tallycounters/tally/deploy"
	"github.com/tallycounters/tally/internal/core"
)

// Options say what to check.
type Options struct {
	// Client is of the database, built as the functions build theirs
	// (fsrpc's options); Admin, a counter.Client on it.
	Client *firestore.Client
	Admin  *counter.Client
	Layout core.Layout
	// Project and Database name them; Local says they are the local
	// stack's (FIRESTORE_EMULATOR_HOST), where no IAM and no release of
	// rules are to check.
	Project, Database string
	Local             bool
	// IncrementURL is where Increment answers: "" to ask gcloud, in
	// Region.
	IncrementURL, Region string
	// Release reads the rules in force, and TallyRules are tally's for
	// the configuration (tally rules): what the rules must hold.
	Release    deploy.Release
	TallyRules string
	// FoldWithin bounds the wait for a shard write to be folded: a
	// liveness bound, well past a healthy fold's second. Default 2 min.
	FoldWithin time.Duration
	// Gcloud is the gcloud command; default "gcloud".
	Gcloud string
	Out    io.Writer
}

// A Result is one check's.
type Result struct {
	Check   string
	Verdict Verdict
	Says    string // what holds, or what does not and what to do
}

// Verdict is a check's outcome.
type Verdict string

// The verdicts.
const (
	OK   Verdict = "ok"
	Fail Verdict = "FAIL"
	Skip Verdict = "skip" // it cannot be checked here, which Says says why
)

// check is one of the checks, by name.
type check struct {
	name string
	run  func(ctx context.Context, o Options, run string) (Verdict, string)
}

var checks = []check{
	{"functions", functions},
	{"verify", verify},
	{"aggregation", aggregation},
	{"fold", fold},
	{"rules", rules},
	{"roles", roles},
}

// Run runs every check, prints a line each to o.Out, and returns them.
func Run(ctx context.Context, o Options) []Result {
	if o.FoldWithin <= 0 {
		o.FoldWithin = 2 * time.Minute
	}
	if o.Gcloud == "" {
		o.Gcloud = "gcloud"
	}
	run := runID()
	var out []Result
	for _, c := range checks {
		v, says := c.run(ctx, o, run)
		r := Result{Check: c.name, Verdict: v, Says: says}
		if o.Out != nil {
			fmt.Fprintf(o.Out, "%-4s  %-11s  %s\n", r.Verdict, r.Check, r.Says)
		}
		out = append(out, r)
	}
	return out
}

// Failed reports whether a check failed.
func Failed(rs []Result) bool {
	for _, r := range rs {
		if r.Verdict == Fail {
			return true
		}
	}
	return false
}

// runID names a run's own documents.
func runID() string {
	var b [4]byte
	rand.Read(b[:])
	return time.Now().UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
}

// Collection is where a run keeps the documents of its own: one, and
// what the checks write under it, all removed at its end.
const Collection = "tally_doctor"
