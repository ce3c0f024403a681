package bench

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/tallycounters/tally/counter"
	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/core/calendar"
	"github.com/tallycounters/tally/internal/tools/bench/report"
	"github.com/tallycounters/tally/internal/tools/opcount"
)

// The modes of RunWindows: the same load on posts counted without
// windows, then with them.
const (
	WinPlain   = "plain"   // posts:views
	WinWindows = "windows" // posts:views and the windows of winDecl
)

// WindowsModes lists the modes of RunWindows.
var WindowsModes = []string{WinPlain, WinWindows}

// winDecl are the windows of the windows mode, of buckets of u: minutes
// by default, so that a run crosses several boundaries in minutes.
func winDecl(u calendar.Unit) string {
	return fmt.Sprintf("views_m=views per %s keep 10,views_3m=views over 3 %ss,hot=trend(views, 10m)", u, u)
}

// winHot is the id of the hot post.
const winHot = "hot"

// DefaultQuiet is how many quiet posts RunWindows counts unless told.
const DefaultQuiet = 10000

// windowsLayout is the layout of mode m, with the calendar c.
func windowsLayout(m string, c Calendar) (core.Layout, error) {
	decl := collPosts + ":views"
	if m == WinWindows {
		decl += "," + winDecl(c.unit())
	}
	l := core.Default()
	var err error
	if l.Docs, err = core.ParseCounts(decl); err != nil {
		return l, err
	}
	if l.Zone, err = c.location(); err != nil {
		return l, fmt.Errorf("bench: the zone of the buckets: %w", err)
	}
	return l, nil
}

// RunWindows measures counts by time: in each mode, on a fresh emulator,
// one hot post takes o.Rate views a second for o.Boundaries buckets
// (minutes, unless o.Calendar says) and a little more, while o.Counters
// quiet posts take one view each in the first bucket (so that each
// boundary after it has them all due). In the windows mode the boundary
// job runs at each bucket's start, as the scheduler runs it. It reports what an increment costs with and
// without windows, what the boundary job costs and takes per document,
// and how every closed bucket, window and trend compares with the truth
// that the increments' commit times give.
func RunWindows(ctx context.Context, opts WindowsOptions) (*report.Windows, error) {
	o := opts.all()
	if err := o.pickModes(WindowsModes, "--windows"); err != nil {
		return nil, err
	}
	if o.Boundaries < 1 {
		o.Boundaries = 3
	}
	if _, err := windowsLayout(WinWindows, o.Calendar); err != nil {
		return nil, err
	}
	e, err := begin(ctx, o)
	if err != nil {
		return nil, err
	}
	defer e.stop()
	o = e.o
	rep := &report.Windows{Started: time.Now(), Options: optionsJSON(o), Quiet: o.Counters, HotRate: o.Rate,
		Boundaries: o.Boundaries, Windows: winDecl(o.Calendar.unit())}
	for _, m := range o.Modes {
		r, err := e.runWindows(ctx, m)
		if err != nil {
			return rep, fmt.Errorf("bench: windows mode %s: %w", m, err)
		}
		rep.Modes = append(rep.Modes, r)
	}
	return rep, nil
}

// winRun is one mode's run.
type winRun struct {
	mode  string
	ids   []string // counters: the hot post's first, then the quiet ones'
	hot   loadResult
	quiet loadResult
	jobs  []report.Boundary
}

// runWindows makes mode m's posts, starts its Rollup instances, drives the
// load from the start of a bucket, runs the boundary job at each start of
// a bucket after it, waits for every event and fold, and measures.
func (e *env) runWindows(ctx context.Context, m string) (report.WindowsMode, error) {
	o := e.o
	r := report.WindowsMode{Mode: m}
	if err := e.freshEmulator(ctx); err != nil {
		return r, err
	}
	lay, err := windowsLayout(m, o.Calendar)
	if err != nil {
		return r, err
	}
	spec := e.spec
	spec.Counts, spec.Calendar = core.FormatCounts(lay.Docs), o.Calendar
	if err := e.restartInstances(ctx, spec); err != nil {
		return r, err
	}
	run := &winRun{mode: m, ids: []string{winHot + ".views"}}
	for i := range o.Counters {
		run.ids = append(run.ids, fmt.Sprintf("q-%05d.views", i))
	}
	if err := e.makeWindowPosts(ctx, run); err != nil {
		return r, err
	}
	for _, k := range []string{report.ModeTally, "reader"} {
		e.ops[k].Reset()
	}
	for _, in := range e.instances {
		if err := in.reset(); err != nil {
			return r, err
		}
	}
	e.pullFolds()
	// From the start of the next bucket, M0, to a little past the last
	// boundary the run crosses.
	u, zone := o.Calendar.unit(), lay.Zone
	m0 := u.Next(u.Start(time.Now(), zone), zone)
	e.report(m+" wait", 0, time.Until(m0).Round(time.Second), "for the start of a bucket", false)
	if err := sleepUntil(ctx, m0); err != nil {
		return r, err
	}
	starts := []time.Time{m0} // the run's buckets' starts, M0 first
	for range o.Boundaries {
		starts = append(starts, u.Next(starts[len(starts)-1], zone))
	}
	first := starts[1].Sub(m0)
	end := starts[o.Boundaries].Add(min(5*time.Second, first/2))
	inc := e.incrementer(report.ModeTally, collPosts, e.clients[report.ModeTally])
	var wg sync.WaitGroup
	wg.Go(func() {
		run.hot = drive(ctx, run.ids[:1], load{workers: o.Workers, rate: o.Rate}, time.Until(end), inc,
			func(el time.Duration, n int64, done bool) {
				e.report(m+" load", el, end.Sub(m0), fmt.Sprintf("hot: %d views, %.0f/s", n, float64(n)/max(el.Seconds(), 0.001)), done)
			})
	})
	if o.Counters > 0 {
		// Every quiet post once, spread over four fifths of the first
		// bucket (48 s of a minute).
		quietRate := float64(o.Counters) / (first.Seconds() * 4 / 5)
		wg.Go(func() {
			run.quiet = drive(ctx, run.ids[1:], load{workers: o.Workers, rate: quietRate, pick: inTurns(o.Counters, 1)},
				time.Duration(float64(o.Counters)/quietRate*float64(time.Second)), inc, func(time.Duration, int64, bool) {})
		})
	}
	if m == WinWindows {
		wg.Go(func() { run.jobs = e.boundaryJobs(ctx, lay, starts[1:]) })
	}
	wg.Wait()
	if ctx.Err() != nil {
		return r, ctx.Err()
	}
	settled := e.settleWindows(ctx, run)
	r.SettleMS = ms(settled)
	return r, e.measureWindows(ctx, &r, run)
}

// restartInstances stops tally's Rollup instances and starts as many with
// spec.
func (e *env) restartInstances(ctx context.Context, spec instanceSpec) error {
	for _, in := range e.instances {
		in.stop()
	}
	e.spec = spec
	for i := range e.instances {
		in, err := e.startInstance(ctx, spec)
		if err != nil {
			return err
		}
		e.instances[i] = in
	}
	e.retarget()
	return nil
}

// makeWindowPosts creates the run's posts, before any of their events is
// delivered: Rollup counts their views, and no created trigger is
// registered, so making them costs no fold.
func (e *env) makeWindowPosts(ctx context.Context, run *winRun) error {
	start := time.Now()
	bw := e.reader.BulkWriter(ctx)
	for i, id := range run.ids {
		doc, _ := target(collPosts, id)
		if _, err := bw.Create(e.reader.Doc(doc), map[string]any{"title": "a post"}); err != nil {
			return fmt.Errorf("bench: make posts: %w", err)
		}
		if i%1000 == 0 {
			e.reportCount(run.mode+" setup", start, i+1, len(run.ids), fmt.Sprintf("%d of %d posts", i+1, len(run.ids)))
		}
	}
	bw.End()
	e.report(run.mode+" setup", time.Since(start), time.Since(start), fmt.Sprintf("%d posts", len(run.ids)), true)
	return nil
}

// boundaryJobs runs the boundary job of lay's windows at each of starts,
// as the scheduler does, each on a client of its own whose operations it
// counts.
func (e *env) boundaryJobs(ctx context.Context, lay core.Layout, starts []time.Time) []report.Boundary {
	ops := &opcount.Ops{}
	fs, err := opcount.Client(ctx, e.host, e.o.Project, ops)
	if err != nil {
		return []report.Boundary{{Error: err.Error()}}
	}
	defer fs.Close()
	c := counter.New(fs, counter.Options{Layout: lay.Settings(), Spacing: e.o.Window})
	var out []report.Boundary
	for i, at := range starts {
		k := i + 1
		if sleepUntil(ctx, at) != nil {
			break
		}
		ops.Reset()
		rep, err := c.MoveWindows(ctx, time.Now(), nil)
		b := report.Boundary{Boundary: at, Due: rep.Due, Moved: rep.Moved, Errors: rep.Errors, TookMS: float64(rep.TookMS),
			Reads: ops.Reads(), Writes: ops.Writes()}
		if err != nil {
			b.Error = err.Error()
		}
		out = append(out, b)
		e.report(fmt.Sprintf("%s boundary %d", WinWindows, k), time.Duration(rep.TookMS)*time.Millisecond, lay.SmallestUnit().Next(at, lay.Zone).Sub(at),
			fmt.Sprintf("%d due, %d moved, %d ms", rep.Due, rep.Moved, rep.TookMS), true)
	}
	return out
}

// settleWindows waits, for at most the settle bound, until every event of
// the run is answered, and then for one fold window: every post then
// holds every increment. It returns how long it waited.
func (e *env) settleWindows(ctx context.Context, run *winRun) time.Duration {
	start := time.Now()
	wctx, cancel := context.WithTimeout(ctx, settleBound(e.o))
	defer cancel()
	e.bridges[report.ModeTally].Wait(wctx)
	sleepUntil(wctx, time.Now().Add(2*e.o.Window))
	e.report(run.mode+" settle", time.Since(start), settleBound(e.o), "every event answered", true)
	return time.Since(start)
}

// sleepUntil sleeps until t, or ctx is done.
func sleepUntil(ctx context.Context, t time.Time) error {
	select {
	case <-time.After(time.Until(t)):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
