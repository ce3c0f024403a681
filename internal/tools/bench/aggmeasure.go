package bench

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"cloud.google.com/go/firestore/apiv1/firestorepb"

	"github.com/tallycounters/tally/internal/fold"
	"github.com/tallycounters/tally/internal/tools/bench/report"
)

// settleAggregate waits, after the load that ended at end, for the mode's
// counts: until its bridge has received events, want in all (one for each
// change: the emulator posts them a while after the write), and answered
// every one, and, for tally, every post holds its true count; at most
// settleBound. It says when that was, and whether the bound cut it short.
// The query keeps nothing to wait for.
func (e *env) settleAggregate(ctx context.Context, run *aggRun, end time.Time, want int64) (time.Time, bool) {
	if run.mode == report.AggQuery {
		return end, false
	}
	deadline := end.Add(settleBound(e.o))
	wctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	b := e.bridges[report.AggTrigger]
	if run.mode == report.AggTally {
		b = e.bridges[report.ModeTally]
	}
	for {
		e.report(run.mode+" settle", time.Since(end), settleBound(e.o), "", false)
		done := b.Stats().Received >= want && b.Idle()
		if done && run.mode == report.AggTally {
			got, err := e.postCounts(wctx, run)
			run.mu.Lock()
			done = err == nil && slices.Equal(got, run.truth)
			run.mu.Unlock()
		}
		if done {
			e.report(run.mode+" settle", time.Since(end), settleBound(e.o), "settled", true)
			return time.Now(), false
		}
		select {
		case <-wctx.Done():
			e.report(run.mode+" settle", time.Since(end), settleBound(e.o), "cut short", true)
			return deadline, true
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// measureAggregate fills r with the figures of run: what each change cost,
// how often posts were written, when each count took in each change, and
// how far each post's count is from Firestore's own count() of its
// comments at the end.
func (e *env) measureAggregate(ctx context.Context, r *report.AggregateMode, run *aggRun, res loadResult, settled time.Time) error {
	r.Seconds = res.End.Sub(res.Start).Seconds()
	r.Errors = res.Errors
	run.mu.Lock()
	changes := slices.Clone(run.changes)
	trigger := slices.Clone(run.applied)
	truth := slices.Clone(run.truth)
	run.mu.Unlock()
	tallyChanges(r, changes)
	slices.Sort(res.Latencies)
	r.LatencyP50, r.LatencyP99 = ms(percentile(res.Latencies, .5)), ms(percentile(res.Latencies, .99))
	folds, err := e.aggOps(r, run)
	if err != nil {
		return err
	}
	if err := e.checkAggCounts(ctx, r, run, truth); err != nil {
		return err
	}
	// Writes of posts, a second at a time, from the load's start until the
	// counts settled; and when each change first showed in its post's count.
	var byPost map[int][]time.Time
	var seen []time.Duration
	switch run.mode {
	case report.AggTally:
		byPost, seen = tallySeen(r, run, folds, changes)
	case report.AggTrigger:
		byPost, seen = triggerSeen(r, trigger, changes)
	}
	r.Visible = spreadOf(seen)
	if run.mode != report.AggQuery {
		hotParents(r, byPost, res.Start, int(settled.Sub(res.Start)/time.Second)+1)
	}
	if run.mode == report.AggTally {
		r.PartsMost, err = e.mostParts(ctx, run, truth)
	}
	return err
}

// tallyChanges counts the load's changes by kind.
func tallyChanges(r *report.AggregateMode, changes []change) {
	for _, c := range changes {
		switch c.delta {
		case 1:
			r.Creates++
		case -1:
			r.Deletes++
		default:
			r.Edits++
		}
	}
	r.Changes = int64(len(changes))
	r.ChangesPerSec = float64(r.Changes) / r.Seconds
}

// aggOps sets the reads and writes per change, the load's and the
// trigger's or the Rollup instances', and returns the instances' folds.
func (e *env) aggOps(r *report.AggregateMode, run *aggRun) ([]FoldWrite, error) {
	ops := e.ops[run.mode] // the load's writes, and the trigger's
	reads, writes := ops.Reads(), ops.Writes()
	var folds []FoldWrite
	if run.mode == report.AggTally {
		for _, in := range e.instances {
			st, err := in.stats()
			if err != nil {
				return nil, err
			}
			reads, writes = reads+st.Reads, writes+st.Writes
			fs, err := in.folds()
			if err != nil {
				return nil, err
			}
			folds = append(folds, fs...)
		}
	}
	n := float64(r.Changes)
	r.ReadsPerChange, r.WritesPerChange = float64(reads)/n, float64(writes)/n
	return folds, nil
}

// checkAggCounts compares Firestore's own count of each post's comments
// with the load's truth, and the counts the mode kept on the posts with
// it; for the query, it prices what a reader pays to show it.
func (e *env) checkAggCounts(ctx context.Context, r *report.AggregateMode, run *aggRun, truth []int64) error {
	counted := e.ops[run.mode]
	counted.Reset()
	got, err := e.countComments(ctx, run)
	if err != nil {
		return err
	}
	if run.mode == report.AggQuery {
		r.ReadsPerView = ptr(float64(counted.Reads()) / float64(len(run.ids)))
	}
	if !slices.Equal(got, truth) {
		return fmt.Errorf("the posts' comments counted by Firestore are not those the load made")
	}
	if run.mode == report.AggQuery {
		return nil
	}
	kept, err := e.postCounts(ctx, run)
	if err != nil {
		return err
	}
	for i := range kept {
		if kept[i] != truth[i] {
			r.PostsOff++
		}
		r.TotalMinusTruth += kept[i] - truth[i]
	}
	return nil
}

// tallySeen is when each post was written by a fold, and how long each
// change took to show: until the first fold that read at or after it and
// covered its child.
func tallySeen(r *report.AggregateMode, run *aggRun, folds []FoldWrite, changes []change) (map[int][]time.Time, []time.Duration) {
	byPost := map[int][]time.Time{}
	index := map[string]int{}
	for i, id := range run.ids {
		index[run.coll+"/"+id+"."+aggField] = i
	}
	perPost := map[int][]FoldWrite{}
	for _, f := range folds {
		if i, ok := index[f.Counter]; ok {
			byPost[i] = append(byPost[i], f.At)
			perPost[i] = append(perPost[i], f)
		}
	}
	for _, fs := range perPost {
		slices.SortFunc(fs, func(a, b FoldWrite) int { return a.At.Compare(b.At) })
	}
	var seen []time.Duration
	for _, c := range changes {
		if c.delta == 0 {
			continue
		}
		k := slices.IndexFunc(perPost[c.post], func(f FoldWrite) bool { return !f.ReadAt.Before(c.at) && covers(f.Ranges, c.child) })
		if k < 0 {
			r.Unseen++
			continue
		}
		seen = append(seen, perPost[c.post][k].At.Sub(c.at))
	}
	return byPost, seen
}

// triggerSeen is when the trigger wrote each post, and how long each
// change took to show: until the trigger first applied it.
func triggerSeen(r *report.AggregateMode, trigger []applied, changes []change) (map[int][]time.Time, []time.Duration) {
	byPost := map[int][]time.Time{}
	first := map[string]time.Time{}
	for _, a := range trigger {
		byPost[a.post] = append(byPost[a.post], a.at)
		key := fmt.Sprint(a.child, a.delta)
		if t, ok := first[key]; !ok || a.at.Before(t) {
			first[key] = a.at
		}
	}
	var seen []time.Duration
	for _, c := range changes {
		if c.delta == 0 {
			continue
		}
		t, ok := first[fmt.Sprint(c.child, c.delta)]
		if !ok {
			r.Unseen++
			continue
		}
		seen = append(seen, t.Sub(c.at))
	}
	return byPost, seen
}

// hotParents sets the most writes any one post took in each second from
// start, over seconds, and the posts' writes in all.
func hotParents(r *report.AggregateMode, byPost map[int][]time.Time, start time.Time, seconds int) {
	r.HotParentSeries = make([]int, seconds)
	for _, ts := range byPost {
		for s, k := range perSecond(ts, start, seconds) {
			r.HotParentSeries[s] = max(r.HotParentSeries[s], k)
		}
		r.ParentWrites += int64(len(ts))
	}
	r.HotParentPeak = slices.Max(r.HotParentSeries)
}

// covers reports whether child falls in one of ranges, each [lo, hi), ""
// hi: no end.
func covers(ranges [][2]string, child string) bool {
	for _, rg := range ranges {
		if child >= rg[0] && (rg[1] == "" || child < rg[1]) {
			return true
		}
	}
	return false
}

// countComments runs Firestore's count() over each post's comments, on the
// mode's client, sixteen at a time.
func (e *env) countComments(ctx context.Context, run *aggRun) ([]int64, error) {
	c := e.clients[run.mode]
	out := make([]int64, len(run.ids))
	next := make(chan int)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	for range 16 {
		wg.Go(func() {
			for i := range next {
				q := c.Collection(run.coll).Doc(run.ids[i]).Collection(aggChild).NewAggregationQuery().WithCount("n")
				res, err := q.Get(ctx)
				if err == nil {
					n, ok := res["n"].(*firestorepb.Value)
					if !ok {
						err = fmt.Errorf("count() answered %T", res["n"])
					} else {
						out[i] = n.GetIntegerValue()
					}
				}
				if err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		})
	}
	for i := range run.ids {
		next <- i
	}
	close(next)
	wg.Wait()
	return out, first
}

// mostParts is how many parts tally keeps for the post with the most
// comments.
func (e *env) mostParts(ctx context.Context, run *aggRun, truth []int64) (int, error) {
	biggest := 0
	for i := range truth {
		if truth[i] > truth[biggest] {
			biggest = i
		}
	}
	p, err := fold.NewFolder(e.reader, tallyLayout(e.o), e.o.Window).Read(ctx, run.coll+"/"+run.ids[biggest])
	if err != nil {
		return 0, err
	}
	return len(p.Parts[aggChild]), nil
}
