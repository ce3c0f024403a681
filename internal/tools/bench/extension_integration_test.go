package bench

import (
	"context"
	"testing"
	"time"

	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/tools/bench/report"
)

// TestExtensionBenchSmall: the extension's bench, small, its three
// modes: every total exact, no client's view above the truth, at most
// one move a second of tally's alone (the extension's workers write the
// document besides), every figure of the bill measured, and what the
// clients' listeners saw.
func TestExtensionBenchSmall(t *testing.T) {
	paths := emulatortest.RequirePaths(t)
	t.Parallel()
	rep, err := RunExtension(context.Background(), ExtensionOptions{Documents: 2, Setup: Setup{
		Settle:  emulatortest.Liveness, // a bound for a slow machine, not a verdict
		Workers: 8, Rate: 40, Duration: 3 * time.Second, DuplicateRate: 0.2, DelayRate: 0.2, MaxDelay: 300 * time.Millisecond,
		Project: emulatortest.Project, Emulator: paths,
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Modes) != 3 {
		t.Fatalf("%d modes; want tally, extension and extension+worker", len(rep.Modes))
	}
	for _, m := range rep.Modes {
		t.Logf("%s: %+v", m.Mode, m)
		if m.Acked == 0 || m.Drift != 0 || m.SettleMS == nil || m.Left != 0 {
			t.Errorf("%s: %d acknowledged, total - acknowledged %+d, %d left in shards", m.Mode, m.Acked, m.Drift, m.Left)
		}
		if m.Views == 0 || m.Above != 0 {
			t.Errorf("%s: %d views, %d above the truth; want views, none above", m.Mode, m.Views, m.Above)
		}
		if m.Bill.Total <= m.Bill.Firestore || m.ReadsPerIncr <= 0 || m.ListenerReadsPerIncr <= 0 {
			t.Errorf("%s: bill %+v, reads %v, listener reads %v; want each measured", m.Mode, m.Bill, m.ReadsPerIncr, m.ListenerReadsPerIncr)
		}
	}
	if ext := rep.Modes[1]; ext.Mode != report.ModeExtension || ext.ParentMostInSecond > 1 || ext.Dips != 0 {
		t.Errorf("%s: %d writes of a document in a second, %d dips; want at most 1, and none", ext.Mode, ext.ParentMostInSecond, ext.Dips)
	}
}
