package report

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
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
	for _, rng := range [][2]float64{{0, 12}, {0, 16}, {0, 2500}, {0, 3}, {-40, 7}, {-300, 1500}, {0, 0.5}} {
		ticks := (wholeTicks{}).Ticks(rng[0], rng[1])
		zero := false
		for _, tick := range ticks {
			if tick.Value != math.Trunc(tick.Value) || strings.Contains(tick.Label, ".") || tick.Label == "" {
				t.Errorf("over %v, a tick at %v labelled %q; want whole numbers, each labelled", rng, tick.Value, tick.Label)
			}
			zero = zero || tick.Value == 0
		}
		if span := rng[1] - rng[0]; span >= 4 && (len(ticks) < 4 || len(ticks) > 11) {
			t.Errorf("over %v, %d ticks %v; want 4 to 11", rng, len(ticks), ticks)
		}
		if rng[0] <= 0 && rng[1] >= 0 && !zero {
			t.Errorf("over %v, no tick at 0: %v", rng, ticks)
		}
	}
	// a legend at the top covers no line: the axis rises above them by
	// the legend's height
	p := plot.New()
	addLine(p, "naive", perSecondPoints([]int{100, 200, 150}), plotter.PostStep)
	addLimit(p, 1, 3, "1 write/s")
	c := draw.New(vgimg.New(10*vg.Inch, 3*vg.Inch))
	headroom(p, c)
	legend := float64(p.Legend.Rectangle(c).Size().Y / c.Rectangle.Size().Y)
	if p.Y.Max < 200/(1-legend) {
		t.Errorf("the axis of lines up to 200 under a legend of %.0f%% of the panel ends at %v; want room for the legend above them", 100*legend, p.Y.Max)
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
