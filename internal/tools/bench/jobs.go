package bench

import (
	"context"
	"fmt"
	"sync"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/counter"
	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/fold"
	"github.com/tallycounters/tally/internal/tools/bench/report"
	"github.com/tallycounters/tally/internal/tools/emulator"
	"github.com/tallycounters/tally/internal/tools/opcount"
	"github.com/tallycounters/tally/layout"
	"github.com/tallycounters/tally/setup"
)

// JobsOptions configures RunJobs.
type JobsOptions struct {
	Setup
	Due      []int // documents due, a run each; default 10,000
	Parallel []int // parts run at once, a run each; default 1, 4, 16
	PartSize int   // documents a part holds at most; default counter.DefaultPartSize
	// Budget, if not 0, bounds each job's run: its parts stop when it
	// ends, and the run reports what they moved by then, and how fast.
	Budget time.Duration
	// PubSub: for each count of due documents, also run the boundary job
	// end to end, through the local stack and Pub/Sub (pubsubOn).
	PubSub bool
}

// RunJobs measures the boundary job and Reconcile over many documents:
// for each count of due documents, on an emulator of its own, for each
// number of parts at once, it makes that many counters whose windows
// are due at the next start of a minute, runs the job there (its listing,
// then its parts, so many at a time, each as an invocation runs it), and
// checks that none is left due; then Reconcile over the counters of the
// most parts at once, as many at a time.
func RunJobs(ctx context.Context, o JobsOptions) (*report.Jobs, error) {
	if len(o.Due) == 0 {
		o.Due = []int{10000}
	}
	if len(o.Parallel) == 0 {
		o.Parallel = []int{1, 4, 16}
	}
	if o.PartSize <= 0 {
		o.PartSize = counter.DefaultPartSize
	}
	if o.Project == "" {
		o.Project = "demo-tally-bench"
	}
	rep := &report.Jobs{Started: time.Now(), PartSize: o.PartSize}
	for _, n := range o.Due {
		runs, err := jobsOn(ctx, o, n)
		rep.Runs = append(rep.Runs, runs...)
		if err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// jobsOn runs the jobs over n due documents, each number of parts at
// once on an emulator of its own (unless o names one): the emulator's
// every query costs more the more documents it holds.
func jobsOn(ctx context.Context, o JobsOptions, n int) ([]report.JobRun, error) {
	var runs []report.JobRun
	for i, p := range o.Parallel {
		rs, err := jobOn(ctx, o, n, p, i == len(o.Parallel)-1)
		runs = append(runs, rs...)
		if err != nil {
			return runs, err
		}
	}
	if o.PubSub {
		r, err := pubsubOn(ctx, o, n)
		runs = append(runs, r)
		if err != nil {
			return runs, err
		}
	}
	return runs, nil
}

// jobOn runs the boundary job over n due documents, parallel parts at
// once, and then, if reconcile, Reconcile over them.
func jobOn(ctx context.Context, o JobsOptions, n, parallel int, reconcile bool) ([]report.JobRun, error) {
	host := o.EmulatorHost
	if host == "" {
		e, err := emulator.Start(ctx, emulator.Options{Paths: o.Emulator})
		if err != nil {
			return nil, err
		}
		defer e.Stop()
		host = e.Host()
	}
	ops := &opcount.Ops{}
	fs, err := opcount.Client(ctx, host, o.Project, ops)
	if err != nil {
		return nil, err
	}
	defer fs.Close()
	c, err := dueCounters(ctx, fs, fmt.Sprintf("jobs-%d-%d", n, parallel), n, o.progress)
	if err != nil {
		return nil, err
	}
	ops.Reset()
	progress := func(name, detail string, elapsed time.Duration, done bool) { // named apart from the same run at other sizes
		o.progress(fmt.Sprintf("%d due: %s", n, name), detail, elapsed, done)
	}
	r := runJob(ctx, c, counter.JobWindows, parallel, o.PartSize, o.Budget, ops, progress)
	r.Due = n
	rest, err := c.Split(ctx, counter.Part{Job: counter.JobWindows, At: time.Now(), Seq: 1}, n+1, time.Time{}, func(counter.Part) error { return nil })
	if err != nil {
		return []report.JobRun{r}, err
	}
	r.Left = rest.Due
	runs := []report.JobRun{r}
	if reconcile {
		ops.Reset()
		runs = append(runs, runJob(ctx, c, counter.JobReconcile, parallel, o.PartSize, o.Budget, ops, progress))
	}
	return runs, nil
}

// progress reports a phase, if anyone listens.
func (o JobsOptions) progress(name, detail string, elapsed time.Duration, done bool) {
	if o.Progress != nil {
		o.Progress(Phase{Name: name, Elapsed: elapsed, Detail: detail, Done: done})
	}
}

// runJob runs job now over c's counters: its listing, then its parts,
// parallel at a time, and measures it.
func runJob(ctx context.Context, c *counter.Client, job string, parallel, size int, budget time.Duration, ops *opcount.Ops,
	progress func(string, string, time.Duration, bool)) report.JobRun {
	r := report.JobRun{Job: job, Parallel: parallel, Fanout: setup.FanoutInProcess}
	name := fmt.Sprintf("%s, %d at once", job, parallel)
	began := time.Now()
	run := ctx
	if budget > 0 {
		var cancel context.CancelFunc
		run, cancel = context.WithTimeout(ctx, budget)
		defer cancel()
	}
	parts := make(chan counter.Part, 1<<16)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range parallel {
		wg.Go(func() {
			for p := range parts {
				pr, err := c.RunPart(run, p, nil)
				mu.Lock()
				r.Moved, r.Failed = r.Moved+pr.Moved, r.Failed+pr.Failed
				switch {
				case err != nil && run.Err() != nil && ctx.Err() == nil:
					r.Stopped = true // the budget ended
				case err != nil && r.Error == "":
					r.Error = err.Error()
				}
				done := r.Moved + r.Failed
				mu.Unlock()
				progress(name, fmt.Sprintf("%d done", done), time.Since(began), false)
			}
		})
	}
	split, err := c.Split(ctx, counter.Part{Job: job, At: time.Now(), Seq: 1}, size, time.Time{}, func(p counter.Part) error {
		parts <- p
		return nil
	})
	r.ListMS = ms(time.Since(began))
	close(parts)
	wg.Wait()
	r.TookMS = ms(time.Since(began))
	if err != nil {
		r.Error = err.Error()
	}
	if job == counter.JobReconcile {
		r.Due = split.Due
	}
	r.Parts = split.Parts
	r.DocsPerS = float64(r.Moved) / max(r.TookMS/1000, 0.001)
	if r.Stopped {
		r.Failed = 0 // not failed: not run, as the budget ended
	}
	if split.Due > 0 {
		r.Reads, r.Writes = float64(ops.Reads())/float64(split.Due), float64(ops.Writes())/float64(split.Due)
	}
	progress(name, fmt.Sprintf("%d of %d moved, %.0f/s", r.Moved, split.Due, r.DocsPerS), time.Since(began), true)
	return r
}

// dueCounters makes n counters in collection coll, each with a shard of
// 1 and a window of minutes, folded in one minute, and returns when the
// next minute starts and every one is due, with a client of their
// layout. One counter is folded; the others are its copies, made at once
// (as many folds would take the emulator minutes): their shards first,
// then the fold and its copies, each written in the minute its fold is
// of, as a fold writes its counter (from the next minute's start, if too
// little of this one is left). If the copies take past that minute, it
// says how many did.
func dueCounters(ctx context.Context, fs *firestore.Client, coll string, n int, progress func(string, string, time.Duration, bool)) (*counter.Client, error) {
	env := jobsEnv(coll)
	l, err := core.LayoutFromEnv(func(k string) string { return env[k] })
	if err != nil {
		return nil, err
	}
	began := time.Now()
	c := counter.New(fs, counter.Options{Layout: l.Settings(), Spacing: time.Second})
	if err := writeAll(ctx, fs, n, func(bw *firestore.BulkWriter, id string) error {
		_, err := bw.Set(l.Shard(fs, id, "", 0), map[string]any{l.ShardField: int64(1)})
		return err
	}, func(i int) { progress("setup "+coll, fmt.Sprintf("%d of %d shards", i, n), time.Since(began), false) }); err != nil {
		return nil, err
	}
	if next := time.Now().Truncate(time.Minute).Add(time.Minute); time.Until(next) < time.Since(began)+10*time.Second {
		// The copies take about as long as the shards took: too little of
		// this minute is left to make them in it.
		if err := sleepUntil(ctx, next); err != nil {
			return nil, err
		}
	}
	snap, err := foldOne(ctx, fs, l, c)
	if err != nil {
		return nil, err
	}
	minute, onTime := snap.UpdateTime.Truncate(time.Minute), 0
	if err := writeAll(ctx, fs, n, func(bw *firestore.BulkWriter, id string) error {
		_, err := bw.Set(l.Counter(fs, id), snap.Data())
		return err
	}, func(done int) {
		if !time.Now().Truncate(time.Minute).After(minute) {
			onTime = done
		}
		progress("setup "+coll, fmt.Sprintf("%d of %d counters", done, n), time.Since(began), false)
	}); err != nil {
		return nil, err
	}
	detail := fmt.Sprintf("%d counters, due at the next minute", n)
	if late := n - onTime; late > 0 {
		detail += fmt.Sprintf(" (at most %d written past their fold's minute: their move reads their counts at each start crossed by aggregation)", late)
	}
	progress("setup "+coll, detail, time.Since(began), true)
	if err := sleepUntil(ctx, time.Now().Truncate(time.Minute).Add(time.Minute+time.Second)); err != nil {
		return nil, err
	}
	return c, nil
}

// foldOne makes, increments and folds a counter "t" of l, reads it and
// deletes it and its shard: what a fold writes, for copies.
func foldOne(ctx context.Context, fs *firestore.Client, l core.Layout, c *counter.Client) (*firestore.DocumentSnapshot, error) {
	if err := c.Create(ctx, "t", 1); err != nil {
		return nil, err
	}
	if err := c.Add(ctx, "t", "", 1); err != nil {
		return nil, err
	}
	if _, err := fold.NewFolder(fs, l, time.Second).Fold(ctx, "t"); err != nil {
		return nil, err
	}
	snap, err := l.Counter(fs, "t").Get(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := l.Counter(fs, "t").Delete(ctx); err != nil {
		return nil, err
	}
	if _, err := l.Shard(fs, "t", "", 0).Delete(ctx); err != nil {
		return nil, err
	}
	return snap, nil
}

// writeAll writes, with one bulk writer, what write writes for each of n
// counters d0000000, d0000001, ..., and tells written how many are, every
// 5,000 and at the end.
func writeAll(ctx context.Context, fs *firestore.Client, n int, write func(*firestore.BulkWriter, string) error, written func(int)) error {
	bw := fs.BulkWriter(ctx)
	defer bw.End()
	for i := range n {
		if err := write(bw, fmt.Sprintf("d%07d", i)); err != nil {
			return err
		}
		if (i+1)%5000 == 0 || i == n-1 {
			bw.Flush()
			written(i + 1)
		}
	}
	return nil
}

// jobsEnv is the configuration of the counters in coll that the jobs'
// bench makes due: a window of minutes.
func jobsEnv(coll string) map[string]string {
	return map[string]string{layout.EnvCollection: coll, layout.EnvCounts: coll + ":total_m=total per minute keep 10"}
}
