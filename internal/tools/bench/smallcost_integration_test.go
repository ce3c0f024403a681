//go:build linux

package bench

import (
	"testing"

	"github.com/tallycounters/tally/internal/tools/bench/report"
)

// TestQuietCostOnSmallInstances runs tally's Increment on instances of
// less than one vCPU (--increment-cpu), each a process of its own confined
// to its share of a CPU and taking one request at a time, over quiet
// documents written into: exact, a window apart, each request billed alone
// at that size, with the CPU the instances used and the time they were
// held back measured.
func TestQuietCostOnSmallInstances(t *testing.T) {
	t.Parallel()
	const vcpu = 0.167
	rep := quietRun(t, Setup{Rate: 20, IncrementCPU: vcpu, IncrementInstances: 2, Modes: []string{report.ModeTally}})
	tally := rep.Modes[0]
	b := tally.Bill
	t.Logf("tally: %d acknowledged, answers %v; %.3f reads, %.3f writes an increment; bill %+v", tally.Acked, tally.Answers, tally.ReadsPerIncr, tally.WritesPerIncr, b)
	checkExactAndSpaced(t, tally, window)
	if rep.Options.IncrementCPU != vcpu || b.IncrementVCPU != vcpu {
		t.Errorf("options say %g vCPU, the bill %g; want %g", rep.Options.IncrementCPU, b.IncrementVCPU, vcpu)
	}
	// Every increment is a request of the instances, metered there.
	if b.IncrementRequests < 1 || b.IncrementSeconds <= 0 {
		t.Errorf("Increment: %.3f requests and %.1f s an 1,000 increments; want every increment metered by its instance", b.IncrementRequests, b.IncrementSeconds)
	}
	if b.IncrementCPUSeconds == nil || *b.IncrementCPUSeconds <= 0 || b.IncrementThrottledSeconds == nil {
		t.Errorf("Increment's CPU used %v, held back %v; want both measured", b.IncrementCPUSeconds, b.IncrementThrottledSeconds)
	}
}
