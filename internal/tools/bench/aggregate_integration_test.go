package bench

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tallycounters/tally/internal/testkit/emulatortest"
)

// TestBenchAggregate keeps a count of comments on 5 posts the three ways,
// with every event delivered twice and a fifth of them delayed, on the
// emulator's own trigger delivery and two Rollup instances. It checks what
// holds at any speed: tally's counts are Firestore's own count() of the
// comments on every post, each created or deleted comment shows in one of
// its post's writes, and no post is written twice in a second; the
// per-event trigger counts every duplicate, +1 for each created comment
// and -1 for each deleted one, in a write of the post per event.
func TestBenchAggregate(t *testing.T) {
	paths := emulatortest.RequirePaths(t)
	t.Parallel()
	rep, err := RunAggregate(context.Background(), AggregateOptions{
		Counters: 5, Existing: 20,
		Setup: Setup{
			Settle:  emulatortest.Liveness, // the wait for exact totals ends when they are: a bound for a slow machine, not a verdict
			Workers: 8, Rate: 40, Duration: 3 * time.Second, Spacing: time.Second, Instances: 2, DuplicateRate: 1,
			DelayRate: 0.2, MaxDelay: 300 * time.Millisecond, Project: emulatortest.Project, Emulator: paths,
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Modes) != 3 {
		t.Fatalf("%d modes, want %v", len(rep.Modes), AggregateModes)
	}
	tally, trigger, query := rep.Modes[0], rep.Modes[1], rep.Modes[2]
	for _, m := range rep.Modes {
		t.Logf("%s: %+v", m.Mode, m)
		if m.Changes == 0 || m.Creates == 0 || m.Edits == 0 || m.Deletes == 0 || m.Errors != 0 {
			t.Errorf("%s: %d changes (%d created, %d edited, %d deleted), %d failed; want some of each, none failed",
				m.Mode, m.Changes, m.Creates, m.Edits, m.Deletes, m.Errors)
		}
	}
	if tally.TotalMinusTruth != 0 || tally.PostsOff != 0 || tally.SettleBounded {
		t.Errorf("tally: %+d from the truth on %d posts (settle cut short: %v); want exact", tally.TotalMinusTruth, tally.PostsOff, tally.SettleBounded)
	}
	if tally.Visible == nil || tally.Visible.N != int(tally.Creates+tally.Deletes) || tally.Unseen != 0 {
		t.Errorf("tally: %+v shown and %d never, of %d created or deleted", tally.Visible, tally.Unseen, tally.Creates+tally.Deletes)
	}
	if tally.HotParentPeak != 1 {
		t.Errorf("tally: %d writes of one post in one second; want 1", tally.HotParentPeak)
	}
	if tally.Backfill == nil || tally.Backfill.Reads == 0 || tally.Backfill.Writes != 5 {
		t.Errorf("tally: backfill %+v; want a write of each post", tally.Backfill)
	}
	if *tally.Events >= 10 && (*tally.Duplicated == 0 || *tally.Delayed == 0) { // spread evenly: see TestBenchSmall
		t.Errorf("tally: no faults injected (%d duplicated, %d delayed of %d events)", *tally.Duplicated, *tally.Delayed, *tally.Events)
	}
	if want := 2 * (trigger.Creates + trigger.Deletes); trigger.ParentWrites != want {
		t.Errorf("trigger: %d writes of posts, want two for each comment created or deleted, %d", trigger.ParentWrites, want)
	}
	if want := trigger.Creates - trigger.Deletes; trigger.TotalMinusTruth != want {
		t.Errorf("trigger: %+d from the truth, want each duplicate counted: %+d", trigger.TotalMinusTruth, want)
	}
	if query.TotalMinusTruth != 0 || query.ReadsPerView == nil || *query.ReadsPerView != 1 || query.WritesPerChange != 1 {
		t.Errorf("query: %+d from the truth, %v reads per view, %.2f writes per change; want exact, 1 and 1",
			query.TotalMinusTruth, query.ReadsPerView, query.WritesPerChange)
	}
	var table strings.Builder
	rep.WriteTable(&table)
	if !strings.Contains(table.String(), "total minus truth") {
		t.Errorf("the table has no total minus truth:\n%s", table.String())
	}
	path := filepath.Join(t.TempDir(), "agg.json")
	if err := rep.WriteJSON(path); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"reads_per_change"`, `"writes_per_change"`, `"total_minus_truth"`, `"hot_parent_writes_per_second"`, `"visible"`} {
		if !strings.Contains(string(b), key) {
			t.Errorf("the JSON has no %s", key)
		}
	}
}
