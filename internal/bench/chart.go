package bench

import (
	"fmt"
	"math"
	"os"
	"strings"
)

// WriteChart draws, for tally and the per-event rollup, parent writes per
// second (log scale) and how far the total trails the acknowledged
// increments, over the run, as an SVG file.
func (r *Report) WriteChart(path string) error {
	return os.WriteFile(path, []byte(r.svg()), 0o644)
}

const (
	chartW, panelH   = 760.0, 240.0
	left, right, gap = 70.0, 20.0, 60.0
)

var colors = map[string]string{ModeTally: "#1a73e8", ModeNaive: "#d93025", ModeSingle: "#f29900"}

func (r *Report) svg() string {
	var modes []ModeResult
	for _, m := range r.Modes {
		if m.HasRollup {
			modes = append(modes, m)
		}
	}
	var b strings.Builder
	height := 2*panelH + 2*gap + 40 + 18*float64(len(modes))
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" font-family="sans-serif" font-size="12">`+"\n", chartW, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")

	// Panel 1: parent writes per second, log scale 0.1 .. 10^k.
	maxW := 1.0
	seconds := 1
	for _, m := range modes {
		for _, v := range m.ParentSeries {
			maxW = math.Max(maxW, float64(v))
		}
		seconds = max(seconds, len(m.ParentSeries))
	}
	top := math.Pow(10, math.Ceil(math.Log10(maxW)))
	y1 := func(v float64) float64 {
		v = math.Max(v, 0.1)
		return gap + panelH*(1-(math.Log10(v)+1)/(math.Log10(top)+1))
	}
	x := func(sec float64) float64 { return left + (chartW-left-right)*sec/float64(seconds) }
	panel(&b, gap, "parent writes per second (log scale)", seconds)
	for v := 0.1; v <= top; v *= 10 {
		fmt.Fprintf(&b, `<text x="%.0f" y="%.1f" text-anchor="end">%g</text><line x1="%.0f" x2="%.0f" y1="%.1f" y2="%.1f" stroke="#eee"/>`+"\n",
			left-6, y1(v)+4, v, left, chartW-right, y1(v), y1(v))
	}
	for _, m := range modes {
		var pts []string
		for s, v := range m.ParentSeries {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f %.1f,%.1f", x(float64(s)), y1(float64(v)), x(float64(s+1)), y1(float64(v))))
		}
		polyline(&b, pts, colors[m.Mode])
	}

	// Panel 2: acknowledged minus total, in increments, every 100 ms.
	top2 := gap*2 + panelH
	lo, hi := 0.0, 1.0
	for _, m := range modes {
		for _, v := range m.LagSeries {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	y2 := func(v float64) float64 { return top2 + panelH*(1-(v-lo)/(hi-lo)) }
	panel(&b, top2, "acknowledged increments not yet in total (negative: total too high)", seconds)
	for _, v := range []float64{lo, 0, hi} {
		fmt.Fprintf(&b, `<text x="%.0f" y="%.1f" text-anchor="end">%.0f</text><line x1="%.0f" x2="%.0f" y1="%.1f" y2="%.1f" stroke="#eee"/>`+"\n",
			left-6, y2(v)+4, v, left, chartW-right, y2(v), y2(v))
	}
	for _, m := range modes {
		var pts []string
		for i, v := range m.LagSeries {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(float64(i)/10), y2(v)))
		}
		polyline(&b, pts, colors[m.Mode])
	}

	// Legend.
	ly := top2 + panelH + 44
	for _, m := range modes {
		fmt.Fprintf(&b, `<rect x="%.0f" y="%.0f" width="14" height="4" fill="%s"/><text x="%.0f" y="%.0f">%s: %s</text>`+"\n",
			left, ly-4, colors[m.Mode], left+20, ly, m.Mode, m.Description)
		ly += 18
	}
	b.WriteString("</svg>\n")
	return b.String()
}

// panel draws a panel's frame, title and time axis.
func panel(b *strings.Builder, top float64, title string, seconds int) {
	fmt.Fprintf(b, `<text x="%.0f" y="%.0f" font-weight="bold">%s</text>`+"\n", left, top-10, title)
	fmt.Fprintf(b, `<rect x="%.0f" y="%.0f" width="%.0f" height="%.0f" fill="none" stroke="#999"/>`+"\n", left, top, chartW-left-right, panelH)
	step := max(1, seconds/10)
	for s := 0; s <= seconds; s += step {
		xs := left + (chartW-left-right)*float64(s)/float64(seconds)
		fmt.Fprintf(b, `<text x="%.1f" y="%.0f" text-anchor="middle">%ds</text>`+"\n", xs, top+panelH+16, s)
	}
}

func polyline(b *strings.Builder, pts []string, color string) {
	if len(pts) == 0 {
		return
	}
	fmt.Fprintf(b, `<polyline fill="none" stroke="%s" stroke-width="1.5" points="%s"/>`+"\n", color, strings.Join(pts, " "))
}
