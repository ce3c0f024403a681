package bench

import (
	"context"
	"testing"
	"time"

	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/tools/bench/report"
)

// TestViralCounterUnderContention takes a quiet counter, new and on one
// shard, to 200 increments a second at once, through the contention
// stand-in (past 10 writes a second to one document, writes wait, then
// fail ABORTED, as on Firestore), beside the single-document counter at
// the same load in the same run. tally's counter grows, or takes every
// increment on one shard in few writes (group commit); every answer is
// true (a refusal wrote nothing); its total is exact; and its parent is
// written at most once a window. The share of increments each refuses is
// logged, not judged: it depends on how fast the machine offers the load
// against the growth's first seconds (docs/bench.md's "A counter that
// goes viral" gives it measured).
func TestViralCounterUnderContention(t *testing.T) {
	paths := emulatortest.RequirePaths(t)
	t.Parallel()
	const window = time.Second
	rep, err := Run(context.Background(), Options{
		Counters: 1, Burst: true, Contention: 10,
		Setup: Setup{
			Settle:  emulatortest.Liveness, // the wait for exact totals ends when they are: a bound for a slow machine, not a verdict
			Workers: 32, Rate: 200, Duration: 4 * time.Second, Spacing: window, DuplicateRate: 0.1,
			DelayRate: 0.1, MaxDelay: 500 * time.Millisecond, Modes: []string{report.ModeTally, report.ModePlain},
			Project: emulatortest.Project, Emulator: paths,
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	tally, single := rep.Modes[0], rep.Modes[1]
	for _, m := range rep.Modes {
		t.Logf("%s: answers %v, hottest document each second %v, shards at the end %s", m.Mode, m.Answers, m.HotShardSeries, report.Maybe("%d", m.ShardsAtEnd))
		if m.RefusedWritten != 0 || m.Answers["500"] != 0 {
			t.Errorf("%s: %d refused increments were written; answers %v", m.Mode, m.RefusedWritten, m.Answers)
		}
	}
	if tally.Drift != 0 || tally.ShardSum != tally.Acked || tally.SettleLag == nil {
		t.Errorf("tally: total - acknowledged %+d, shards %d for %d acknowledged", tally.Drift, tally.ShardSum, tally.Acked)
	}
	// The counter grows, or group commit puts its increments in so few
	// writes that one shard takes them all: either way none is refused
	// for the hot spot. Which one depends on the machine's speed.
	if grown := tally.ShardsAtEnd != nil && *tally.ShardsAtEnd >= 2; !grown && tally.Answers["503"] > 0 {
		t.Errorf("tally: %s shards at the end, and %d increments refused; want the counter grown, or every increment taken",
			report.Maybe("%d", tally.ShardsAtEnd), tally.Answers["503"])
	}
	if tally.ParentGap != nil && *tally.ParentGap < float64(window/time.Millisecond) {
		t.Errorf("tally: two parent writes %.1fms apart, inside the window", *tally.ParentGap)
	}
	share := func(m report.Mode) float64 {
		return float64(m.Answers["503"]) / float64(m.Acked+m.Errors)
	}
	t.Logf("refused: tally %.3f, the single document %.3f", share(tally), share(single))
}

// TestBenchFeed runs tally over 20 counters made by their first increment,
// with one listener on their collection, as a feed page holds, and two
// Rollup instances: every total is exact, and the listener saw every
// increment in its counter's total.
func TestBenchFeed(t *testing.T) {
	paths := emulatortest.RequirePaths(t)
	t.Parallel()
	rep, err := Run(context.Background(), Options{
		Counters: 20, Popularity: PopularityClient, Rest: 500 * time.Millisecond, Listeners: true,
		Feed: true,
		Setup: Setup{
			Workers: 20, Duration: 3 * time.Second, Spacing: 300 * time.Millisecond, Instances: 2,
			Settle: emulatortest.Liveness, Modes: []string{report.ModeTally}, Project: emulatortest.Project, Emulator: paths,
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	m := rep.Modes[0]
	if m.Acked == 0 || m.Drift != 0 || m.ShardSum != m.Acked || m.Errors != 0 {
		t.Errorf("%d acknowledged, %d answered otherwise, total - acknowledged %+d, shards %d", m.Acked, m.Errors, m.Drift, m.ShardSum)
	}
	if v := m.Visible; v == nil || v.All == nil || v.All.N != int(m.Acked) || v.Unseen != 0 {
		t.Errorf("visible latency %+v for %d acknowledged increments; want each seen by the feed's listener", v, m.Acked)
	}
}
