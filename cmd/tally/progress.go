package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
	"golang.org/x/term"

	"github.com/tallycounters/tally/internal/tools/bench"
)

// progress shows how each phase of a bench goes (the warm-up, each mode's
// load, each mode's wait for its total): in a terminal, as one bar per
// phase that moves with its time against its bound; elsewhere (a file, a
// pipe, CI), as one line per phase when it ends. It is safe for concurrent
// use, and a report of a phase that has ended is dropped.
type progress struct {
	mu    sync.Mutex
	out   io.Writer
	p     *mpb.Progress // nil when out is not a terminal
	bar   *mpb.Bar
	name  string
	note  *atomic.Value // the current bar's detail, read as it is drawn
	ended map[string]bool
}

func newProgress(w io.Writer) *progress {
	g := &progress{out: w, ended: map[string]bool{}}
	// A terminal of no width (a pseudo-terminal nobody sized) shows no
	// bar: it gets the lines.
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) && hasWidth(f) {
		g.p = mpb.New(mpb.WithOutput(w), mpb.WithWidth(30), mpb.WithRefreshRate(200*time.Millisecond))
	}
	return g
}

// hasWidth reports whether terminal f says how wide it is.
func hasWidth(f *os.File) bool {
	w, _, err := term.GetSize(int(f.Fd()))
	return err == nil && w > 0
}

// phase hears how a phase goes.
func (g *progress) phase(ph bench.Phase) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.ended[ph.Name] {
		return
	}
	if ph.Done {
		g.ended[ph.Name] = true
	}
	if g.p == nil {
		if ph.Done {
			fmt.Fprintf(g.out, "%-15s %s  %s\n", ph.Name, took(ph.Elapsed.Milliseconds(), ph.Bound), ph.Detail)
		}
		return
	}
	if ph.Name != g.name {
		g.finish()
		g.name = ph.Name
		note := &atomic.Value{}
		note.Store("")
		g.note = note
		bound := ph.Bound
		// Made with no total, so that SetTotal may end it before its bound
		// (mpb takes SetTotal only from such bars), then given the bound.
		g.bar = g.p.AddBar(0,
			mpb.PrependDecorators(decor.Name(fmt.Sprintf("%-15s", ph.Name))),
			mpb.AppendDecorators(decor.Any(func(st decor.Statistics) string {
				return fmt.Sprintf("%s  %s", took(st.Current, bound), note.Load())
			})),
		)
		g.bar.SetTotal(max(1, bound.Milliseconds()), false)
	}
	g.note.Store(ph.Detail)
	if ph.Bound > 0 {
		g.bar.SetCurrent(min(ph.Elapsed.Milliseconds(), ph.Bound.Milliseconds()))
	} else { // no bound: the bar runs full, and the time says how long
		g.bar.SetTotal(ph.Elapsed.Milliseconds()+1, false)
		g.bar.SetCurrent(ph.Elapsed.Milliseconds())
	}
	if ph.Done {
		g.finish()
	}
}

// finish completes the current bar where it stands. g.mu is held.
func (g *progress) finish() {
	if g.bar != nil {
		g.bar.SetTotal(-1, true)
	}
	g.bar, g.name = nil, ""
}

// wait completes the last bar and returns once every bar is drawn.
func (g *progress) wait() {
	g.mu.Lock()
	g.finish()
	g.mu.Unlock()
	if g.p != nil {
		g.p.Wait()
	}
}

// took is how long a phase has run, ms milliseconds, against its bound if
// it has one.
func took(ms int64, bound time.Duration) string {
	if bound <= 0 {
		return fmt.Sprintf("%5.1fs", float64(ms)/1000)
	}
	return fmt.Sprintf("%5.1fs of at most %v", float64(ms)/1000, bound)
}
