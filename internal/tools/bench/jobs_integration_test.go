package bench

import (
	"context"
	"testing"

	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/setup"
)

// TestBenchJobs runs bench --windows --due small, with --pubsub: the
// boundary job in parts of 10 run 4 at a time, Reconcile over the same
// counters, and the job end to end through the stack and the Pub/Sub
// emulator; each moves every document once, leaves none due, and says how
// many parts it took. It waits for the next minute twice: its documents'
// windows are of minutes.
func TestBenchJobs(t *testing.T) {
	paths := emulatortest.RequirePaths(t)
	t.Parallel()
	const due = 40
	rep, err := RunJobs(context.Background(), JobsOptions{
		Setup:    Setup{Project: emulatortest.Project, Emulator: paths},
		Due:      []int{due},
		Parallel: []int{4},
		PartSize: 10,
		PubSub:   true,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Runs) != 3 {
		t.Fatalf("%d runs, want the job in-process, Reconcile and the job through Pub/Sub: %+v", len(rep.Runs), rep.Runs)
	}
	for i, want := range []struct{ job, fanout string }{{"windows", setup.FanoutInProcess}, {"reconcile", setup.FanoutInProcess}, {"windows", setup.FanoutPubSub}} {
		r := rep.Runs[i]
		t.Logf("%+v", r)
		if r.Job != want.job || r.Fanout != want.fanout || r.Due != due || r.Moved != due || r.Failed != 0 || r.Left != 0 || r.Parts != due/10 || r.Error != "" {
			t.Errorf("run %d: %+v; want %s (%s) over %d documents in %d parts, each moved, none left due", i, r, want.job, want.fanout, due, due/10)
		}
	}
	if r := rep.Runs[0]; r.Reads != 3 || r.Writes != 1 {
		t.Errorf("the job: %.2f reads and %.2f writes a document; want 3 and 1", r.Reads, r.Writes)
	}
}
