package bench

import (
	"context"
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
	})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	rep.WriteTable(&b)
	t.Log("\n" + b.String())
	if rep.Acked == 0 || rep.Errors != 0 {
		t.Errorf("%d increments acknowledged, %d failed", rep.Acked, rep.Errors)
	}
	if rep.Lost != 0 || rep.Extra != 0 || rep.ExactAfter == nil {
		t.Errorf("lost %d, extra %d: totals are not the acknowledged increments", rep.Lost, rep.Extra)
	}
	for _, c := range rep.Counters {
		if c.Total != c.Acked || c.Sum != c.Acked {
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
	if rep.AnsweredAfter == nil || rep.Bridge.Received < rep.Acked {
		t.Errorf("%d events for %d increments, not all answered within the bound", rep.Bridge.Received, rep.Acked)
	}
	if rep.Bridge.Duplicated == 0 || rep.Bridge.Delayed == 0 || rep.Bridge.Dropped != 0 {
		t.Errorf("events: %+v; want some duplicated and delayed, none dropped", rep.Bridge)
	}
}
