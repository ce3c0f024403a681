package bench

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/tools/bench/report"
)

// TestQuietCost runs tally and the per-event rollup side by side over
// counters each incremented about once, on one shard, through the
// emulator's own triggers, in the guide's layout and with three counts on
// each document: tally's folds read nothing, so an increment costs tally
// what it costs the per-event rollup (Increment's read of the parent, the
// shard's write, the parent's write), and tally stays exact. Increment
// reads the parent on every increment here: how many find it cached
// depends on how many increments each mode's load got through, which
// varies with the machine's load, and is the same code in both modes. The
// counters are taken in turns, fewer increments than counters, so that no
// two increments of one counter are ever in flight together: two would
// share one read of the parent, as many as the machine's load made
// overlap.
func TestQuietCost(t *testing.T) {
	paths := emulatortest.RequirePaths(t)
	t.Parallel()
	for _, fields := range []int{0, 3} {
		rep, err := Run(context.Background(), Options{
			Counters: 400, Popularity: PopularityTurns, Fields: fields, Shards: 1, Warmup: time.Second,
			Setup: Setup{
				Workers: 4, Rate: 40, Duration: 3 * time.Second, ShardCacheTTL: time.Nanosecond, Settle: emulatortest.Liveness,
				Modes: []string{report.ModeTally, report.ModeNaive, report.ModePlain}, Project: emulatortest.Project, Emulator: paths,
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		tally, naive, plain := rep.Modes[0], rep.Modes[1], rep.Modes[2]
		t.Logf("--fields %d: reads/increment tally %.3f, naive %.3f; writes/increment %.3f, %.3f; failed writes %.3f; $ per million %.2f, %.2f",
			fields, tally.ReadsPerIncr, naive.ReadsPerIncr, tally.WritesPerIncr, naive.WritesPerIncr, tally.FailedPerIncr, tally.PerMillion, naive.PerMillion)
		if tally.Acked == 0 || tally.Drift != 0 || tally.ShardSum != tally.Acked {
			t.Errorf("--fields %d: tally: %d acknowledged, total - acknowledged %+d, shards %d", fields, tally.Acked, tally.Drift, tally.ShardSum)
		}
		if tally.ReadsPerFold == nil || *tally.ReadsPerFold > 0.05 {
			t.Errorf("--fields %d: tally's Rollup read %s per parent write; a counter on one shard is folded from its events", fields, report.Maybe("%.3f", tally.ReadsPerFold))
		}
		// Both pay Increment's read; tally's Rollup may read for a fold now
		// and then (at most 0.05 a parent write, checked above).
		if naive.ReadsPerIncr < 0.99 {
			t.Errorf("--fields %d: the per-event rollup read %.3f per increment; with no cache, Increment reads the parent on each", fields, naive.ReadsPerIncr)
		}
		for _, m := range []report.Mode{tally, naive} {
			checkBill(t, fields, m)
		}
		// The per-event rollup runs the guide's layout, with no document to
		// verify.
		verifies := 0.0
		if tally.VerifiesPerIncr != nil {
			verifies = *tally.VerifiesPerIncr
		}
		if tally.ReadsPerIncr-verifies > naive.ReadsPerIncr+0.05 || tally.WritesPerIncr > 2.01 || tally.FailedPerIncr > 0.01 {
			t.Errorf("--fields %d: per increment tally read %.3f (%.3f verifies) and wrote %.3f (%.3f failed), the per-event rollup read %.3f: want no more but the verifies",
				fields, tally.ReadsPerIncr, verifies, tally.WritesPerIncr, tally.FailedPerIncr, naive.ReadsPerIncr)
		}
		checkPlain(t, fields, plain)
		// On documents every commit of Increment verifies the post: each a
		// read on the bill.
		if fields > 0 && (tally.VerifiesPerIncr == nil || *tally.VerifiesPerIncr < 0.99 || tally.ReadsPerIncr < *tally.VerifiesPerIncr) {
			t.Errorf("--fields %d: tally verified %s per increment and read %.3f; want a verify each, priced among the reads",
				fields, report.Maybe("%.3f", tally.VerifiesPerIncr), tally.ReadsPerIncr)
		}
	}
}

// checkPlain: the app's own increments are exact, each one write and
// nothing else, and billed as Firestore's write alone.
func checkPlain(t *testing.T, fields int, m report.Mode) {
	t.Helper()
	if m.Acked == 0 || m.Drift != 0 || m.ReadsPerIncr != 0 || m.WritesPerIncr != 1 || m.VerifiesPerIncr != nil {
		t.Errorf("--fields %d, plain: %d acknowledged, total - acknowledged %+d, %.3f reads, %.3f writes, %s verifies an increment; want exact, 0, 1, none",
			fields, m.Acked, m.Drift, m.ReadsPerIncr, m.WritesPerIncr, report.Maybe("%.3f", m.VerifiesPerIncr))
	}
	if m.ParentPerI == nil || *m.ParentPerI != 1 {
		t.Errorf("--fields %d, plain: %s document writes an increment; want each increment's write counted once", fields, report.Maybe("%.3f", m.ParentPerI))
	}
	if b := m.Bill; b.Total != b.Firestore || math.Abs(b.Firestore-10*report.StandardPrices.Write) > 1e-9 {
		t.Errorf("--fields %d, plain: bill %+v; want a write's price a million, and nothing else", fields, b)
	}
}

// checkBill: the bill's counts are what the stack served. Increment took
// every request the load made (those answered 200, and any other), and
// Rollup every delivery of the bridge (each event it received, and each
// duplicate it sent again); the billable time is there, and a total is
// the sum of its parts.
func checkBill(t *testing.T, fields int, m report.Mode) {
	t.Helper()
	b := m.Bill
	n := float64(m.Acked)
	if inc := math.Round(b.IncrementRequests * n); inc < n || inc > n+float64(m.Errors) {
		t.Errorf("--fields %d, %s: the bill counts %.0f Increment requests; the load made %d answered 200 and %d others", fields, m.Mode, inc, m.Acked, m.Errors)
	}
	if m.Events == nil || m.Duplicated == nil {
		t.Fatalf("--fields %d, %s: no events counted", fields, m.Mode)
	}
	if got, sent := math.Round(b.RollupRequests*n), *m.Events+*m.Duplicated; got != float64(sent) {
		t.Errorf("--fields %d, %s: the bill counts %.0f Rollup requests; the bridge delivered %d (%d events, %d again)", fields, m.Mode, got, sent, *m.Events, *m.Duplicated)
	}
	if b.IncrementSeconds <= 0 || b.RollupSeconds <= 0 || b.EventBytes <= 0 {
		t.Errorf("--fields %d, %s: billable time %.3f + %.3f s per 1,000, events of %.0f bytes; want each measured", fields, m.Mode, b.IncrementSeconds, b.RollupSeconds, b.EventBytes)
	}
	if m.Mode == report.ModeTally && (b.RollupCPUSeconds == nil || *b.RollupCPUSeconds <= 0) {
		t.Errorf("--fields %d: tally's Rollup used %s CPU-s per 1,000; want it measured", fields, report.Maybe("%.3f", b.RollupCPUSeconds))
	}
	if sum := b.Firestore + b.Requests + b.Compute + b.Events; math.Abs(sum-b.Total) > 1e-9 || b.Firestore != m.PerMillion {
		t.Errorf("--fields %d, %s: the bill's parts %+v do not add up", fields, m.Mode, b)
	}
}

// TestClientWrites: with the shards written by the client, tally's mode
// runs no Increment (its bill has no Increment request or time), tally's
// Rollup folds what the clients wrote, and the total is exact.
func TestClientWrites(t *testing.T) {
	paths := emulatortest.RequirePaths(t)
	t.Parallel()
	rep, err := Run(context.Background(), Options{
		Counters: 20, Popularity: PopularityUniform, Shards: 2, Warmup: time.Second,
		Setup: Setup{
			Workers: 4, Rate: 40, Duration: 3 * time.Second, ClientWrites: true,
			Settle: emulatortest.Liveness, // the wait for exact totals ends when they are: a bound for a slow machine, not a verdict
			Modes:  []string{report.ModeTally}, Project: emulatortest.Project, Emulator: paths,
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	m := rep.Modes[0]
	if m.Acked == 0 || m.Drift != 0 || m.ShardSum != m.Acked {
		t.Errorf("%d acknowledged, total - acknowledged %+d, shards %d; want every client write in the total", m.Acked, m.Drift, m.ShardSum)
	}
	if b := m.Bill; b.IncrementRequests != 0 || b.IncrementSeconds != 0 || b.RollupRequests <= 0 || b.Requests >= 0.8 {
		t.Errorf("the bill with client writes: %+v; want no Increment, and Rollup requests", b)
	}
}

// TestQuietCostInDocument runs tally with --in-document beside plain, over
// documents with two counts, each count taken in turn: tally stays exact,
// no document takes two of tally's writes within the window (its own
// increments and its folds alike), and it writes at most what the shard
// path would; priced by instance, Increment pays its instance's life and
// no fee a request. How many increments find their document quiet
// depends on the machine's pace, so it is logged, not checked.
func TestQuietCostInDocument(t *testing.T) {
	t.Parallel()
	rep := quietRun(t, Setup{Rate: 40, IncrementBilling: report.BillingInstance, Modes: []string{report.ModeTally, report.ModePlain}})
	tally, plain := rep.Modes[0], rep.Modes[1]
	t.Logf("tally: %d acknowledged; %.3f reads, %.3f writes, %.2f + %.2f requests an increment; $%.2f a million (plain $%.2f)",
		tally.Acked, tally.ReadsPerIncr, tally.WritesPerIncr, tally.Bill.IncrementRequests, tally.Bill.RollupRequests, tally.PerMillion, plain.PerMillion)
	checkExactAndSpaced(t, tally, window)
	if tally.WritesPerIncr > 2.01 {
		t.Errorf("tally wrote %.3f an increment; the shard path writes at most 2", tally.WritesPerIncr)
	}
	// Billed by instance, Increment's instance lives the whole load and
	// pays no fee a request.
	b := tally.Bill
	if life := 1000 * tally.Seconds / float64(tally.Acked); b.IncrementBilling != report.BillingInstance || math.Abs(b.IncrementSeconds-life) > 1e-9 ||
		math.Abs(b.Requests-b.RollupRequests*report.CloudRunPrices.Request) > 1e-9 {
		t.Errorf("tally's bill %+v; want Increment billed by instance for %.3f s a 1,000 increments, and Rollup's requests alone paying a fee", b, life)
	}
	checkPlain(t, 2, plain)
}

// TestTimedQuietCost: documents that keep windows and a trend of their
// counts (--timed), their windows made by a fold before the load, take
// their quiet increments into themselves, windows and trend in the same
// write: exact, a window apart, most increments written into their
// documents, one write each.
func TestTimedQuietCost(t *testing.T) {
	t.Parallel()
	rep := quietRun(t, Setup{Rate: 20, Modes: []string{report.ModeTally}}, true)
	tally := rep.Modes[0]
	t.Logf("tally: %d acknowledged, %v written into the document; %.3f reads, %.3f writes an increment; $%.2f a million",
		tally.Acked, report.Maybe("%.3f", tally.InDocumentShare), tally.ReadsPerIncr, tally.WritesPerIncr, tally.PerMillion)
	checkExactAndSpaced(t, tally, window)
	if !rep.Options.Timed || tally.InDocumentShare == nil || *tally.InDocumentShare < 0.5 {
		t.Errorf("timed %v, %v written into the documents; want most: each is quiet between its increments, its windows made", rep.Options.Timed, report.Maybe("%.3f", tally.InDocumentShare))
	}
}

// TestKeyedQuietCost sends every increment with an Idempotency-Key, as the
// web client does, to tally with --in-document: exact, a window apart,
// quiet documents' steps written into them with their keys' records (two
// writes), the rest on shards.
func TestKeyedQuietCost(t *testing.T) {
	t.Parallel()
	rep := quietRun(t, Setup{Rate: 20, Keys: true, Modes: []string{report.ModeTally}})
	tally := rep.Modes[0]
	t.Logf("tally: %d acknowledged, %v written into the document; %.3f reads, %.3f writes an increment; $%.2f a million",
		tally.Acked, report.Maybe("%.3f", tally.InDocumentShare), tally.ReadsPerIncr, tally.WritesPerIncr, tally.PerMillion)
	checkExactAndSpaced(t, tally, window)
	// Each document is incremented once in 10 s, in turn: quiet.
	if !rep.Options.Keys || tally.InDocumentShare == nil || *tally.InDocumentShare < 0.5 {
		t.Errorf("keys %v, written into the document %v; want most of the quiet documents' steps", rep.Options.Keys, report.Maybe("%.3f", tally.InDocumentShare))
	}
	if tally.WritesPerIncr > 3.01 {
		t.Errorf("tally wrote %.3f an increment; a keyed step writes at most 3 (its record, its shard, a fold)", tally.WritesPerIncr)
	}
}

// checkExactAndSpaced checks that tally's mode m was exact, and wrote no
// document twice within window.
func checkExactAndSpaced(t *testing.T, m report.Mode, window time.Duration) {
	t.Helper()
	if m.Acked == 0 || m.Drift != 0 {
		t.Errorf("tally: %d acknowledged, total - acknowledged %+d; want exact", m.Acked, m.Drift)
	}
	if m.ParentGap != nil && *m.ParentGap < float64(window/time.Millisecond) {
		t.Errorf("tally: two writes of one document %.1f ms apart, within the %v window", *m.ParentGap, window)
	}
}

// window is the fold spacing of quietRun's loads.
const window = 300 * time.Millisecond

// quietRun runs s (its rate, modes and tally's settings) with --in-document
// over 200 documents with 2 counts each (with timed, their windows and
// trend: --timed), taken in turn, so each is quiet between its
// increments: 4 clients for 3 s, the spacing window.
func quietRun(t *testing.T, s Setup, timed ...bool) *report.Load {
	t.Helper()
	s.Workers, s.Duration, s.Spacing, s.InDocument = 4, 3*time.Second, window, true
	s.Settle = emulatortest.Liveness // the wait for exact totals ends when they are: a bound for a slow machine, not a verdict
	s.Project, s.Emulator = emulatortest.Project, emulatortest.RequirePaths(t)
	rep, err := Run(context.Background(), Options{Counters: 200, Popularity: PopularityTurns, Fields: 2, Timed: len(timed) > 0 && timed[0], Setup: s})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}
