package report

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestChartReadsAtAGlance: the chart's time axis ends where the panels
// stop showing anything (a naive mode's long settle wait of zeros is not
// drawn), its ticks are whole numbers, its title is one line; and the
// report says when the machine could not offer the rate asked for.
func TestChartReadsAtAGlance(t *testing.T) {
	load := make([]int, 10)
	for i := range load {
		load[i] = 100
	}
	r := &Load{Options: Options{Seconds: 10, Rate: 1000, Counters: 1, Shards: 10}, Modes: []Mode{
		{Mode: ModeRaw, IncrPerSec: 400, IncrSeries: load},
		{Mode: ModeTally, IncrPerSec: 390, IncrSeries: load, HasRollup: true,
			ParentSeries: append(append([]int{}, load[:10]...), 1, 1, 0, 0),
			LagSeries:    append(make([]float64, 100), 5, 3, 0, 0)},
		{Mode: ModeNaive, IncrPerSec: 380, IncrSeries: load, HasRollup: true,
			ParentSeries: append(append([]int{}, load...), make([]int, 42)...)}, // waited 52 s, writing nothing after the load
	}}
	if got := r.shownSeconds(); got != 12 {
		t.Errorf("the time axis ends at %v s; want 12: the load's 10 s and the 2 s of parent writes after it", got)
	}
	for _, rng := range [][2]float64{{0, 12}, {0, 2500}, {0, 3}, {-40, 7}} {
		for _, tick := range (wholeTicks{}).Ticks(rng[0], rng[1]) {
			if tick.Value != math.Trunc(tick.Value) || strings.Contains(tick.Label, ".") {
				t.Errorf("over %v, a tick at %v labelled %q; want whole numbers", rng, tick.Value, tick.Label)
			}
		}
	}
	svg := filepath.Join(t.TempDir(), "bench.svg")
	if err := r.WriteChart(svg); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(svg)
	if !strings.Contains(string(b), "tally bench: raw, tally and naive over 10s a mode") {
		t.Errorf("the chart's title is not the one-line one")
	}
	// tally's one write a second has a panel of its own; the caption says
	// what a total below the acknowledged increments means
	r.Modes[1].HotParentSeries = []int{1, 1, 1, 0, 1}
	if err := r.WriteChart(svg); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(svg)
	for _, want := range []string{"tally: most writes to one parent in a second", "overcount", "(below 0: counted more than acknowledged)"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the chart does not say %q", want)
		}
	}
	if w := r.Saturated(); !strings.Contains(w, "could not keep up") || !strings.Contains(w, "400 increments/s of the 1000/s") {
		t.Errorf("a raw client at 40%% of the rate: %q; want the report to say the machine could not keep up", w)
	}
	r.Modes[0].IncrPerSec = 995
	if w := r.Saturated(); w != "" {
		t.Errorf("a raw client at the rate: %q; want nothing said", w)
	}
}
