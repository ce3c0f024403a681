package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"cloud.google.com/go/firestore/apiv1/firestorepb"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/fold"
	"github.com/tallycounters/tally/internal/tools/bench/report"
	"github.com/tallycounters/tally/internal/tools/emulator"
	"github.com/tallycounters/tally/internal/tools/opcount"
	"github.com/tallycounters/tally/internal/tools/stack"
	"github.com/tallycounters/tally/setup"
)

// dueEvery is how often, at most, the run through Pub/Sub counts what is
// still due.
const dueEvery = time.Second

// pubsubOn runs the boundary job over n due documents end to end, as a
// deployment runs it: on an emulator of its own, the local stack's
// Reconcile started with a POST of ?windows, as the scheduler starts it,
// lists them and publishes their parts to the Pub/Sub emulator, whose
// push subscription delivers each to the stack's Reconcile?part. It ends
// when none is left due, counted every dueEvery, or less often where a
// count takes the emulator long.
func pubsubOn(ctx context.Context, o JobsOptions, n int) (report.JobRun, error) {
	r := report.JobRun{Job: "windows", Due: n, Fanout: setup.FanoutPubSub}
	e, err := emulator.Start(ctx, emulator.Options{Paths: o.Emulator})
	if err != nil {
		return r, err
	}
	defer e.Stop()
	fs, err := opcount.Client(ctx, e.Host(), o.Project, &opcount.Ops{})
	if err != nil {
		return r, err
	}
	defer fs.Close()
	coll := fmt.Sprintf("jobs-%d-pubsub", n)
	if _, err := dueCounters(ctx, fs, coll, n, o.progress); err != nil {
		return r, err
	}
	env := jobsEnv(coll)
	cfg, err := setup.ConfigFromEnv(func(k string) string { return env[k] })
	if err != nil {
		return r, err
	}
	cfg.Project, cfg.PartSize = o.Project, o.PartSize
	s, err := stack.Start(ctx, stack.Options{Config: cfg, ExternalHost: e.Host(), Emulator: o.Emulator, Fanout: setup.FanoutPubSub, ManualJobs: true})
	if err != nil {
		return r, err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		s.Stop(sctx)
	}()
	return r, runThrough(ctx, s, fold.NewFolder(fs, core.MustParse(cfg.Layout), cfg.Spacing), o, &r)
}

// runThrough starts the boundary job on s and waits until f counts none
// due at its start, or the budget ends.
func runThrough(ctx context.Context, s *stack.Stack, f *fold.Folder, o JobsOptions, r *report.JobRun) error {
	name := fmt.Sprintf("%d due: windows, through Pub/Sub", r.Due)
	began := time.Now()
	code, body := s.StartJob(ctx, "?windows")
	r.ListMS = ms(time.Since(began))
	var started setup.JobReport
	if err := json.Unmarshal(body, &started); code != http.StatusOK || err != nil {
		return fmt.Errorf("the boundary job: %d %s", code, body)
	}
	r.Parts = started.Parts
	for {
		counted := time.Now()
		left, err := countDue(ctx, f, began)
		if err != nil {
			return err
		}
		wait := max(dueEvery, 10*time.Since(counted)) // the count costs the emulator a scan: a tenth of its time at most
		r.Left, r.Moved = left, r.Due-left
		r.TookMS = ms(time.Since(began))
		r.DocsPerS = float64(r.Moved) / max(r.TookMS/1000, 0.001)
		o.progress(name, fmt.Sprintf("%d of %d moved", r.Moved, r.Due), time.Since(began), left == 0)
		if left == 0 {
			return nil
		}
		if o.Budget > 0 && time.Since(began) > o.Budget {
			r.Stopped = true
			return nil
		}
		if err := sleepUntil(ctx, time.Now().Add(wait)); err != nil {
			return err
		}
	}
}

// countDue counts the documents due at now: one count of each of f's
// queries of them.
func countDue(ctx context.Context, f *fold.Folder, now time.Time) (int, error) {
	due := 0
	for _, q := range f.DueQueries(now) {
		res, err := q.NewAggregationQuery().WithCount("n").Get(ctx)
		if err != nil {
			return 0, err
		}
		n, _ := res["n"].(*firestorepb.Value)
		due += int(n.GetIntegerValue())
	}
	return due, nil
}
