package bench

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tallycounters/tally/internal/testkit/emulatortest"
)

// TestSoak runs the soak at a length CI affords: 64 clients through the
// local stack while the emulator is paused for 5 s, every event may be
// duplicated or delayed, and one of three Rollup instances is killed and
// started again. Every total must come to equal its acknowledged
// increments, with nothing reconciled first.
func TestSoak(t *testing.T) {
	paths := emulatortest.RequirePaths(t)
	t.Parallel()
	rep, err := Soak(context.Background(), SoakOptions{
		Duration: 20 * time.Second, Workers: 64, Rate: 300, Counters: 3, Shards: 10, Instances: 3,
		Pause: 5 * time.Second, Down: 2 * time.Second, DuplicateRate: 0.1, DelayRate: 0.1, Emulator: paths,
		// The wait for exact totals and every event answered ends when
		// they are; its bound is for a machine many times slower (the
		// soak's own 30 s is a figure it reports, not a verdict).
		Settle: emulatortest.Liveness,
	})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	rep.WriteTable(&b)
	t.Log("\n" + b.String())
	// An increment that meets the paused emulator may be answered with a
	// failure, more often the slower the machine: each must be a true
	// answer. A refusal (429, 503) wrote nothing; an unknown outcome (504,
	// or no answer) may have been applied, and only those may make a
	// total pass its acknowledged increments.
	unsure := rep.Answers["504"] + rep.Answers["none"]
	for status, n := range rep.Answers {
		if !slices.Contains([]string{"200", "429", "503", "504", "none"}, status) {
			t.Errorf("%d increments answered %s; want 200, or a refusal or an unknown outcome", n, status)
		}
	}
	if rep.Acked == 0 || rep.Errors > 0 {
		t.Logf("%d increments acknowledged; %d answered otherwise: %v", rep.Acked, rep.Errors, rep.Answers)
	}
	if rep.Acked == 0 || rep.Lost != 0 || rep.Extra > unsure || rep.ExactAfter == nil {
		t.Errorf("%d acknowledged, lost %d, extra %d (%d of unknown outcome): totals are not the acknowledged increments", rep.Acked, rep.Lost, rep.Extra, unsure)
	}
	for _, c := range rep.Counters {
		if c.Total != c.Sum || c.Total < c.Acked || c.Total > c.Acked+unsure {
			t.Errorf("%s: total %d, shards sum %d, acknowledged %d", c.ID, c.Total, c.Sum, c.Acked)
		}
	}
	var faults []string
	for _, f := range rep.Faults {
		faults = append(faults, f.What)
	}
	for _, want := range []string{"paused", "resumed", "killed", "started again"} {
		if !strings.Contains(strings.Join(faults, "\n"), want) {
			t.Errorf("no fault %q among %q", want, faults)
		}
	}
	if rep.AnsweredAfter == nil { // every event of every shard write received and answered
		t.Errorf("%d events for %d increments, not all answered within %v", rep.Bridge.Received, rep.Acked, emulatortest.Liveness)
	}
	if rep.Bridge.Duplicated == 0 || rep.Bridge.Delayed == 0 || rep.Bridge.Dropped != 0 {
		t.Errorf("events: %+v; want some duplicated and delayed, none dropped", rep.Bridge)
	}
}
