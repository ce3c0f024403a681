package report

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// modeColors tells the modes apart in every panel.
var modeColors = map[string]color.Color{
	ModeRaw:   color.RGBA{0x5f, 0x63, 0x68, 0xff},
	ModeTally: color.RGBA{0x1a, 0x73, 0xe8, 0xff},
	ModeNaive: color.RGBA{0xd9, 0x30, 0x25, 0xff},
	ModePlain: color.RGBA{0xf2, 0x99, 0x00, 0xff},
}

// WriteChart draws the run to path, an .svg or a .png, in five panels over
// the same time axis, from the start of each mode's load to the last
// second any panel shows something (the end of the load, and what
// settling shows after it): the most writes one document took each
// second; tally's parent's, on an axis of its own, so that its one write
// a second shows at a glance; parent writes per second; how many
// acknowledged increments the total lacks; and increments per second. The
// axes are linear, so zero is zero, with whole-number ticks; the title is
// one line, and the caption under the last panel says what the lines
// mean, and the run's parameters.
func (r *Load) WriteChart(path string) error {
	const w, h = 10 * vg.Inch, 17 * vg.Inch
	var canvas interface {
		vg.CanvasWriterTo
		vg.CanvasSizer
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".svg":
		canvas = vgsvg.New(w, h)
	case ".png":
		canvas = vgimg.PngCanvas{Canvas: vgimg.New(w, h)}
	default:
		return fmt.Errorf("bench: chart %s: want a .svg or .png file", path)
	}
	seconds := max(1, r.shownSeconds())
	panels := []*plot.Plot{r.hotPanel(), r.parentPanel(), r.lagPanel(), r.incrPanel()}
	if own := r.tallyParentPanel(); own != nil {
		panels = append(panels[:1], append([]*plot.Plot{own}, panels[1:]...)...)
	}
	panels[0].Title.Text = fmt.Sprintf("tally bench: %s over %gs a mode", r.modeNames(), r.Options.Seconds)
	for _, p := range panels {
		p.X.Label.Text = "seconds since the mode's load began"
		p.X.Min, p.X.Max = 0, seconds
		p.X.Tick.Marker = wholeTicks{}
		p.Y.Tick.Marker = wholeTicks{}
		p.Legend.Top = true
		p.Add(plotter.NewGrid())
	}
	last := panels[len(panels)-1]
	last.X.Label.Text += "\n\n" + wrap(caption+" "+r.Title(), 120)
	tiles := draw.Tiles{Rows: len(panels), Cols: 1, PadTop: vg.Millimeter * 4, PadBottom: vg.Millimeter * 4,
		PadLeft: vg.Millimeter * 4, PadRight: vg.Millimeter * 6, PadY: vg.Millimeter * 8}
	grid := make([][]*plot.Plot, len(panels))
	for i, p := range panels {
		grid[i] = []*plot.Plot{p}
	}
	dc := draw.New(canvas)
	for i, row := range plot.Align(grid, tiles, dc) {
		headroom(panels[i], row[0])
		panels[i].Draw(row[0])
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("bench: chart: %w", err)
	}
	if _, err := canvas.WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("bench: chart: %w", err)
	}
	return f.Close()
}

// caption says what the panels' lines mean, before the run's parameters.
const caption = "A parent is the document with a counter's total. tally writes each at most once a second (its own panel); " +
	"the per-event rollup (naive) writes it once per event, as often as it is incremented. Below zero, acknowledged increments not " +
	"in the total means the total counts more than was acknowledged: the per-event rollup counts each duplicated event again, " +
	"an overcount it never takes back. tally's total trails the shards by the increments since its last fold (at most a second " +
	"of them) while the load runs, and is exact once it ends."

// tallyParentPanel: the most writes tally's busiest parent took in each
// second, on an axis of its own up to a few writes, with the line of one
// write a second; nil if tally did not run.
func (r *Load) tallyParentPanel() *plot.Plot {
	for _, m := range r.Modes {
		if m.Mode != ModeTally || m.HotParentSeries == nil {
			continue
		}
		p := plot.New()
		p.Y.Label.Text = "tally: most writes to one parent in a second"
		p.Y.Min, p.Y.Max = 0, 3
		for _, n := range m.HotParentSeries {
			p.Y.Max = max(p.Y.Max, float64(n)+1)
		}
		addLine(p, m.Mode+": a parent", perSecondPoints(m.HotParentSeries), plotter.PostStep)
		addLimit(p, 1, len(m.HotParentSeries), "1 write/s: one document's sustained rate")
		return p
	}
	return nil
}

// hotPanel: the most writes any one shard (solid) and any one parent
// (dashed) took in each second of the load, with the line of SpreadLimit.
func (r *Load) hotPanel() *plot.Plot {
	p := plot.New()
	p.Y.Label.Text = "most writes to one document in a second"
	p.Y.Min = 0
	longest := 0
	for _, m := range r.Modes {
		longest = max(longest, len(m.HotShardSeries))
		what := ": a shard"
		if m.Mode == ModePlain {
			what = ": a counted document"
		}
		addLine(p, m.Mode+what, perSecondPoints(m.HotShardSeries), plotter.PostStep)
		if m.HotParentSeries != nil && m.Mode != ModePlain {
			addLine(p, m.Mode+": a parent", perSecondPoints(m.HotParentSeries), plotter.PostStep)
		}
	}
	addLimit(p, SpreadLimit, longest, fmt.Sprintf("%d writes/s: a document spread", SpreadLimit))
	return p
}

// addLimit draws a dashed grey line at y across seconds, with its label.
func addLimit(p *plot.Plot, y float64, seconds int, label string) {
	limit, _ := plotter.NewLine(plotter.XYs{{X: 0, Y: y}, {X: float64(max(seconds, 1)), Y: y}})
	limit.Color = color.Gray{0x80}
	limit.Dashes = []vg.Length{vg.Points(4), vg.Points(4)}
	p.Add(limit)
	p.Legend.Add(label, limit)
}

// parentPanel: writes per second to the counters' parent documents, with
// the line of one write a second, what one document sustains.
func (r *Load) parentPanel() *plot.Plot {
	p := plot.New()
	p.Y.Label.Text = "parent writes per second"
	p.Y.Min = 0
	longest := 0
	for _, m := range r.Modes {
		if m.ParentSeries == nil {
			continue
		}
		longest = max(longest, len(m.ParentSeries))
		addLine(p, m.Mode, perSecondPoints(m.ParentSeries), plotter.PostStep)
	}
	addLimit(p, 1, longest, "1 write/s: one document's sustained rate")
	return p
}

// lagPanel: acknowledged increments not yet in the total, every 100 ms;
// below zero, the total counts more than was acknowledged.
func (r *Load) lagPanel() *plot.Plot {
	p := plot.New()
	p.Y.Label.Text = "acknowledged increments not in the total\n(below 0: counted more than acknowledged)"
	for _, m := range r.Modes {
		if !m.HasRollup {
			continue
		}
		pts := make(plotter.XYs, len(m.LagSeries))
		for i, v := range m.LagSeries {
			pts[i] = plotter.XY{X: float64(i) / 10, Y: v}
		}
		addLine(p, m.Mode, pts, plotter.NoStep)
	}
	return p
}

// incrPanel: acknowledged increments per second, for every mode.
func (r *Load) incrPanel() *plot.Plot {
	p := plot.New()
	p.Y.Label.Text = "increments per second"
	p.Y.Min = 0
	for _, m := range r.Modes {
		addLine(p, m.Mode, perSecondPoints(m.IncrSeries), plotter.PostStep)
	}
	return p
}

// perSecondPoints draws per-second counts as steps across each second.
func perSecondPoints(series []int) plotter.XYs {
	pts := make(plotter.XYs, 0, len(series)+1)
	for s, n := range series {
		pts = append(pts, plotter.XY{X: float64(s), Y: float64(n)})
	}
	if n := len(series); n > 0 {
		pts = append(pts, plotter.XY{X: float64(n), Y: float64(series[n-1])})
	}
	return pts
}

// addLine draws one mode's line, in its color; a label "mode: what" is
// that mode's, dashed unless it is its shards'.
func addLine(p *plot.Plot, label string, pts plotter.XYs, step plotter.StepKind) {
	if len(pts) == 0 {
		return
	}
	l, err := plotter.NewLine(pts)
	if err != nil {
		return // no finite points to draw
	}
	mode, what, _ := strings.Cut(label, ": ")
	l.StepStyle = step
	l.Color = modeColors[mode]
	l.Width = vg.Points(1.5)
	if what != "" && what != "a shard" {
		l.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
	}
	p.Add(l)
	p.Legend.Add(label, l)
}

// wrap breaks s into lines of at most n bytes at spaces.
func wrap(s string, n int) string {
	var lines []string
	for len(s) > n {
		i := strings.LastIndex(s[:n], " ")
		if i <= 0 {
			break
		}
		lines = append(lines, s[:i])
		s = s[i+1:]
	}
	return strings.Join(append(lines, s), "\n")
}

// shownSeconds is the last second of the run that any panel has something
// to show in: the end of the longest load, or a later second in which a
// mode still wrote, or its total still lacked increments.
func (r *Load) shownSeconds() float64 {
	end := 0.0
	lastNonZero := func(series []int) float64 {
		for i := len(series) - 1; i >= 0; i-- {
			if series[i] != 0 {
				return float64(i + 1)
			}
		}
		return 0
	}
	for _, m := range r.Modes {
		end = max(end, float64(len(m.IncrSeries)), lastNonZero(m.ParentSeries), lastNonZero(m.HotShardSeries))
		for i := len(m.LagSeries) - 1; i >= 0; i-- {
			if m.LagSeries[i] != 0 {
				end = max(end, float64(i+1)/10)
				break
			}
		}
	}
	return math.Ceil(end)
}

// modeNames is the modes of the run, "raw, tally and naive".
func (r *Load) modeNames() string {
	var names []string
	for _, m := range r.Modes {
		names = append(names, m.Mode)
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// headroom raises p's y axis above its lines by as much of c, the
// canvas it is drawn on, as its legend (drawn at the top) takes, and a
// little more, so that the legend covers none of them.
func headroom(p *plot.Plot, c draw.Canvas) {
	if math.IsInf(p.Y.Max, 0) || math.IsInf(p.Y.Min, 0) {
		return
	}
	legend := p.Legend.Rectangle(c).Size().Y
	height := c.Rectangle.Size().Y
	if legend <= 0 || height <= 0 {
		return
	}
	share := min(0.6, float64(legend/height)*1.6+0.02) // the axes' labels take a part of c too
	span := max(p.Y.Max-p.Y.Min, 1)
	p.Y.Max = p.Y.Min + span/(1-share)
}

// wholeTicks label an axis at whole numbers, every 1, 2 or 5 times a
// power of ten, so that about eight fall on it, 0 among them where the
// axis crosses it: the panels count writes, increments and seconds.
type wholeTicks struct{}

func (wholeTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) {
		v := math.Round(lo)
		return []plot.Tick{{Value: v, Label: strconv.FormatFloat(v, 'f', 0, 64)}}
	}
	step := niceStep((hi - lo) / 8)
	var out []plot.Tick
	for v := math.Ceil(lo/step) * step; v <= hi+step/1e9; v += step {
		v := math.Round(v)
		out = append(out, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', 0, 64)})
	}
	return out
}

// niceStep is the least of 1, 2 and 5 times a power of ten, at least 1,
// that is at least raw.
func niceStep(raw float64) float64 {
	if raw <= 1 {
		return 1
	}
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*mag >= raw {
			return m * mag
		}
	}
	return 10 * mag
}
