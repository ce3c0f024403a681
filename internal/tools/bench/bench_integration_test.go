package bench

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"image/png"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tallycounters/tally/increment"
	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/testkit/layouttest"
	"github.com/tallycounters/tally/internal/tools/bench/report"
	"github.com/tallycounters/tally/internal/tools/emulator"
)

// TestBenchSmall runs tally and the per-event rollup side by side at a small
// scale, over 20 counters of Zipf popularity with a listener on each, with
// duplicated and delayed events, on the emulator's own trigger delivery,
// and two tally Rollup instances, each a process. It checks what holds at
// any speed: tally is exact, no two of its parent writes, from either
// instance, are closer than the window, every increment shows in a
// listener, and a plain increment takes no transaction; the per-event
// rollup writes the parent once per event and counts the duplicates.
func TestBenchSmall(t *testing.T) {
	paths := emulatortest.RequirePaths(t)
	t.Parallel()
	const window = 300 * time.Millisecond
	rep, err := Run(context.Background(), Options{
		Counters: 20, Popularity: PopularityZipf, Listeners: true, Shards: 4,
		Setup: Setup{
			Settle:  emulatortest.Liveness, // the wait for exact totals ends when they are: a bound for a slow machine, not a verdict
			Workers: 8, Rate: 100, Duration: 3 * time.Second, Spacing: window, Instances: 2, DuplicateRate: 0.2,
			DelayRate: 0.2, MaxDelay: 500 * time.Millisecond, Modes: []string{report.ModeTally, report.ModeNaive},
			Project: emulatortest.Project, Emulator: paths,
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	tally, naive := rep.Modes[0], rep.Modes[1]
	for _, m := range rep.Modes {
		t.Logf("%s: %+v", m.Mode, m)
		if m.Acked == 0 || m.Errors > 0 || m.ShardSum != m.Acked {
			t.Errorf("%s: %d acknowledged, %d errors, shards sum %d", m.Mode, m.Acked, m.Errors, m.ShardSum)
		}
	}
	if tally.Total != tally.Acked || tally.SettleLag == nil || *tally.Unreached > 0 || tally.SettleBounded {
		t.Errorf("tally: total %d for %d acknowledged increments", tally.Total, tally.Acked)
	}
	if tally.ParentGap != nil && *tally.ParentGap < float64(window/time.Millisecond) {
		t.Errorf("tally: two parent writes %.1fms apart, inside the %v window", *tally.ParentGap, window)
	}
	// The bridge spreads its faults evenly: of any 5 events in a row at
	// 0.2, one is duplicated and one copy delayed, so a mode of 10 events
	// or more has both, however few a slow machine makes.
	if *tally.Events >= 10 && (*tally.Duplicated == 0 || *tally.Delayed == 0) {
		t.Errorf("tally: no faults injected (%d duplicated, %d delayed of %d events)", *tally.Duplicated, *tally.Delayed, *tally.Events)
	}
	if v := tally.Visible; v == nil || v.All == nil || v.All.N != int(tally.Acked) || v.Unseen != 0 || v.HotCounters+v.QuietCounters == 0 {
		t.Errorf("tally: visible latency %+v for %d acknowledged increments; want each seen by a listener", v, tally.Acked)
	}
	if tally.NonOKWritten != 0 || tally.RefusedWritten != 0 || tally.Answers["200"] != tally.Acked {
		t.Errorf("tally: answers %v, %d answered otherwise but written", tally.Answers, tally.NonOKWritten)
	}
	if *tally.IncrementTxPerIncr != 0 {
		t.Errorf("tally: Increment began %.3f transactions per plain increment; want none", *tally.IncrementTxPerIncr)
	}
	if len(tally.InstancePeakMiB) != 2 || tally.InstancePeakMiB[0] <= 0 || tally.InstanceEventsPerSec[0] <= 0 {
		t.Errorf("tally: per instance, peak MiB %v and events/s %v; want 2 of each, measured", tally.InstancePeakMiB, tally.InstanceEventsPerSec)
	}
	if want := int(*naive.Events + *naive.Duplicated); *naive.ParentTotal != want {
		t.Errorf("naive: %d parent writes, want one per delivered event, %d", *naive.ParentTotal, want)
	}
	// A duplicated event counts its write again: one increment or more,
	// as a write holds all that came while the one before it was in flight.
	if naive.Drift < *naive.Duplicated || *naive.Duplicated > 0 && naive.Drift == 0 {
		t.Errorf("naive: total - acknowledged = %d, want the %d duplicates' writes counted again", naive.Drift, *naive.Duplicated)
	}
	if naive.SettleLag != nil || naive.SettleBounded {
		t.Errorf("naive: exact after %v ms, waited to the bound: %v; want never exact, and no wait to the bound", naive.SettleLag, naive.SettleBounded)
	}
	checkReportFiles(t, rep)
}

// TestBenchGivenEmulatorAndURL runs tally mode against an emulator the test
// started (with --functions_emulator at the bench's bridge port) and an
// Increment served elsewhere: the figures come out and the total is exact.
func TestBenchGivenEmulatorAndURL(t *testing.T) {
	emulatortest.Require(t)
	t.Parallel()
	port, err := emulator.FreePort("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	e, err := emulatortest.Start(emulator.Options{FunctionsEmulator: "127.0.0.1:" + strconv.Itoa(port)})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Stop()
	inc := httptest.NewServer(increment.New(emulatortest.ClientAt(t, e.Host(), emulatortest.Project), increment.Config{Layout: layouttest.Public(core.Default()), AutoCreate: true}))
	defer inc.Close()

	rep, err := Run(context.Background(), Options{
		Counters: 1, Shards: 4, URL: inc.URL,
		Setup: Setup{
			Workers: 4, Rate: 50, Duration: 2 * time.Second, Spacing: 200 * time.Millisecond, Settle: emulatortest.Liveness,
			Modes: []string{report.ModeTally}, Project: emulatortest.Project, EmulatorHost: e.Host(), BridgePort: port,
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	m := rep.Modes[0]
	if m.Acked == 0 || m.Total != m.Acked || m.ShardSum != m.Acked || *m.Events == 0 || *m.ParentTotal == 0 {
		t.Errorf("tally against the given emulator and URL: %+v", m)
	}
}

// TestBenchFields runs tally's mode with 3 counts on each of 2 documents,
// through the emulator's triggers on posts: every count ends exact, and
// each document takes at most one write a window for all its counts.
func TestBenchFields(t *testing.T) {
	paths := emulatortest.RequirePaths(t)
	t.Parallel()
	rep, err := Run(context.Background(), Options{
		Counters: 2, Fields: 3, Shards: 4,
		Setup: Setup{
			Workers: 8, Rate: 150, Duration: 3 * time.Second, Spacing: 500 * time.Millisecond, Instances: 2,
			Settle: emulatortest.Liveness, Modes: []string{report.ModeTally}, Project: emulatortest.Project, Emulator: paths,
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	m := rep.Modes[0]
	if m.Acked == 0 || m.Drift != 0 || m.ShardSum != m.Acked || m.ParentPeak == nil || *m.ParentPeak > 2 || m.ParentGap != nil && *m.ParentGap < 500 {
		t.Errorf("3 counts on 2 documents: acknowledged %d, total - acknowledged %+d, shards %d, most writes to one document in a second %v, closest two %v ms",
			m.Acked, m.Drift, m.ShardSum, report.Maybe("%d", m.ParentPeak), report.Maybe("%.0f", m.ParentGap))
	}
	if m.ReadsPerFold == nil || *m.WritesPerFold > 1.01 {
		t.Errorf("a fold of 3 counts: %s reads and %s writes", report.Maybe("%.2f", m.ReadsPerFold), report.Maybe("%.2f", m.WritesPerFold))
	}
}

var pngDecode = png.Decode

// checkReportFiles writes the report's JSON and its chart, as SVG and PNG,
// and checks that each is what it claims: JSON with null where a figure does
// not apply, a PNG image that decodes, an SVG document.
func checkReportFiles(t *testing.T, rep *report.Load) {
	t.Helper()
	dir := t.TempDir()
	js := filepath.Join(dir, "bench.json")
	if err := rep.WriteJSON(js); err != nil {
		t.Fatal(err)
	}
	var back struct {
		Modes []map[string]any `json:"modes"`
	}
	raw, _ := os.ReadFile(js)
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatalf("bench.json: %v", err)
	}
	for _, m := range back.Modes {
		if v, ok := m["ratio_to_raw"]; !ok || v != nil {
			t.Errorf("%s: ratio_to_raw = %v, want null (no raw mode ran)", m["mode"], v)
		}
		if m["mode"] == report.ModeNaive {
			if v, ok := m["last_increment_to_exact_ms"]; !ok || v != nil {
				t.Errorf("naive: last_increment_to_exact_ms = %v, want null: never", v)
			}
			if v, ok := m["rollup_inflight_max"]; !ok || v != nil {
				t.Errorf("naive: rollup_inflight_max = %v, want null", v)
			}
		}
	}
	png := filepath.Join(dir, "bench.png")
	if err := rep.WriteChart(png); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(png)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := pngDecode(f)
	if err != nil || img.Bounds().Dx() < 500 || img.Bounds().Dy() < 500 {
		t.Errorf("bench.png is not a chart-sized PNG: %v", err)
	}
	svg := filepath.Join(dir, "bench.svg")
	if err := rep.WriteChart(svg); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		XMLName xml.Name
	}
	body, _ := os.ReadFile(svg)
	if err := xml.Unmarshal(body, &doc); err != nil || doc.XMLName.Local != "svg" {
		t.Errorf("bench.svg is not an SVG document: %v, root %q", err, doc.XMLName.Local)
	}
	for _, want := range []string{"parent writes per second", "increments per second", "acknowledged increments not in the total"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("the chart has no axis titled %q", want)
		}
	}
	if err := rep.WriteChart(filepath.Join(dir, "bench.gif")); err == nil {
		t.Error("a .gif chart was written")
	}
}
