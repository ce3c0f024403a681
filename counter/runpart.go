package counter

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/fold"
)

// PartReport is what a run of a part did.
type PartReport struct {
	Job      string  `json:"job"`
	Seq      int     `json:"seq"`
	Due      int     `json:"due"`                // the part's documents
	Moved    int     `json:"moved"`              // of them, folded now (a boundary's windows moved, or a counter reconciled)
	Failed   int     `json:"failed"`             // of them, not done: see the log; the part is to be run again
	Repaired []Drift `json:"repaired,omitempty"` // Reconcile: counters whose total had drifted
	TookMS   int64   `json:"took_ms"`
}

// RunPart moves the windows of the documents of a part of the boundary job
// (those still due at p.At: a document folded since moves nothing), or
// reconciles those of a part of Reconcile, moveWorkers at a time, and
// calls report for each it could not. A part with After goes on with a
// listing: run it with Split. Running a part again is harmless.
func (c *Client) RunPart(ctx context.Context, p Part, report func(name string, err error)) (PartReport, error) {
	began := time.Now()
	rep := PartReport{Job: p.Job, Seq: p.Seq, Due: len(p.Names)}
	if err := c.CheckPart(p); err != nil {
		return rep, err
	}
	if p.After != nil {
		return rep, errors.New("counter: a part that goes on with a listing is for Split")
	}
	run, err := c.reconcileAll(ctx, p)
	if err != nil {
		return rep, err
	}
	if p.Job == JobWindows {
		parents, err := c.readDue(ctx, p.Names)
		if err != nil {
			return rep, fmt.Errorf("counter: part %d of %s: %w", p.Seq, p.ID(), err)
		}
		run = func(ctx context.Context, name string) (bool, []Drift, error) {
			fctx, cancel := c.boundFold(ctx)
			defer cancel()
			out, err := c.folder.FoldAtBoundary(fctx, fold.Due{Name: name, Parent: parents[name]}, p.At)
			return out.Wrote, nil, err
		}
	}
	var mu sync.Mutex
	each(ctx, p.Names, func(name string) {
		var done bool
		var drift []Drift
		err := guarded(name, func() (err error) {
			done, drift, err = run(ctx, name)
			return err
		})
		mu.Lock()
		defer mu.Unlock()
		switch {
		case errors.Is(err, ErrNotFound):
			// deleted meanwhile: nothing to do
		case err != nil:
			rep.Failed++
			if report != nil {
				report(name, err)
			}
		case done:
			rep.Moved++
		}
		for _, d := range drift {
			if d.Drift != 0 {
				rep.Repaired = append(rep.Repaired, d)
			}
		}
	})
	rep.TookMS = time.Since(began).Milliseconds()
	return rep, ctx.Err()
}

// CheckPart says what is wrong with a part that came from outside, such
// as a Pub/Sub message: nil if it is a part of a job of this layout.
func (c *Client) CheckPart(p Part) error {
	if err := p.Validate(); err != nil {
		return err
	}
	for _, n := range p.Names {
		if err := c.layout.CheckName(n); err != nil {
			return fmt.Errorf("counter: part %d of %s: %w", p.Seq, p.ID(), err)
		}
	}
	return nil
}

// reconcileAll reads the counters of a part of Reconcile and sums their
// shards, all at once (readAndSum), and returns what
// reconciles one of them from that.
func (c *Client) reconcileAll(ctx context.Context, p Part) (func(context.Context, string) (bool, []Drift, error), error) {
	if p.Job != JobReconcile {
		return nil, nil
	}
	known, err := c.readAndSum(ctx, p.Names)
	if err != nil {
		return nil, fmt.Errorf("counter: part %d of %s: %w", p.Seq, p.ID(), err)
	}
	return func(ctx context.Context, name string) (bool, []Drift, error) {
		ds, err := c.reconcile(ctx, name, known[name])
		return err == nil, ds, err
	}, nil
}

// readDue reads the documents names as the boundary job's fold starts
// from them: one batched read.
func (c *Client) readDue(ctx context.Context, names []string) (map[string]core.Parent, error) {
	refs := make([]*firestore.DocumentRef, len(names))
	for i, n := range names {
		refs[i] = c.layout.Counter(c.fs, n)
	}
	rctx, cancel := c.bound(ctx, 1+len(names)/DefaultPartSize)
	defer cancel()
	snaps, err := c.fs.GetAll(rctx, refs)
	if err != nil {
		return nil, fmt.Errorf("read the documents: %w", err)
	}
	out := make(map[string]core.Parent, len(names))
	now := time.Now()
	for i, s := range snaps {
		out[names[i]] = core.ParentFrom(c.layout, names[i], s, now)
	}
	return out, nil
}

// guarded calls run, a fold of the document name, and answers a panic
// of it as an error: a job never stops on one document's data, whatever
// it holds; it reports the document and goes on with the others.
func guarded(name string, run func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("counter: %s: the fold stopped on what the document holds (%v); the job went on without it:\n%s", name, r, debug.Stack())
		}
	}()
	return run()
}

// each calls do with each of names, moveWorkers at a time, until ctx is
// done.
func each(ctx context.Context, names []string, do func(string)) {
	jobs := make(chan string)
	var wg sync.WaitGroup
	for range min(moveWorkers, len(names)) {
		wg.Go(func() {
			for n := range jobs {
				do(n)
			}
		})
	}
	for _, n := range names {
		select {
		case jobs <- n:
		case <-ctx.Done():
		}
	}
	close(jobs)
	wg.Wait()
}
