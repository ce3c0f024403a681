package bench

import (
	"context"
	"fmt"
	"sync"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/fold"
	"github.com/tallycounters/tally/internal/tools/bench/report"
	"github.com/tallycounters/tally/internal/tools/emulator"
	"github.com/tallycounters/tally/internal/trigger"
)

// AggregateModes lists the modes of RunAggregate.
var AggregateModes = []string{report.AggTally, report.AggTrigger, report.AggQuery}

var aggDescriptions = map[string]string{
	report.AggTally:   "tally Rollup: comments=count(comments), folded in parts at one read time",
	report.AggTrigger: "per-event trigger: increment(+1/-1) on the post for each comment created or deleted",
	report.AggQuery:   "no trigger: a count() query over the comments on every read",
}

// aggCollections keeps the modes' posts apart.
var aggCollections = map[string]string{report.AggTally: collPosts, report.AggTrigger: "bench_trigger", report.AggQuery: "bench_query"}

// The aggregate every mode keeps: a post's count of its comments.
const (
	aggField = "comments"
	aggChild = "comments"
)

// aggregateDocs is the TALLY_COUNTS of tally's mode.
var aggregateDocs = func() []core.Declaration {
	d, err := core.ParseCounts(collPosts + ":" + aggField + "=count(" + aggChild + ")")
	if err != nil {
		panic(err) // a constant
	}
	return d
}()

// RunAggregate measures the three ways of keeping a count of documents, in
// turn, each on a fresh emulator, at the same load: o.Counters posts with
// o.Existing comments each, then comments created (half the changes),
// edited (a quarter) and deleted (a quarter) at o.Rate for o.Duration,
// spread over the posts by o.Popularity, their events duplicated and
// delayed as o says.
func RunAggregate(ctx context.Context, opts AggregateOptions) (*report.Aggregate, error) {
	o := opts.all()
	if err := o.pickModes(AggregateModes, "--aggregate"); err != nil {
		return nil, err
	}
	if o.Existing < 0 {
		return nil, fmt.Errorf("bench: --existing %d: want 0 or more comments a post", o.Existing)
	}
	e, err := begin(ctx, o)
	if err != nil {
		return nil, err
	}
	defer e.stop()
	o = e.o // checked, its defaults filled in
	rep := &report.Aggregate{Started: time.Now(), Options: optionsJSON(o)}
	for _, m := range o.Modes {
		r, err := e.runAggregate(ctx, m)
		if err != nil {
			return rep, fmt.Errorf("bench: aggregate mode %s: %w", m, err)
		}
		rep.Modes = append(rep.Modes, r)
	}
	return rep, nil
}

// aggRun is one mode's run: its posts and the comments the load made.
type aggRun struct {
	mode, coll string
	ids        []string       // the posts' ids
	index      map[string]int // post id to its index in ids
	mu         sync.Mutex
	live       [][]string // by post: comments that exist and that no change holds
	truth      []int64    // by post: its comments now
	changes    []change
	applied    []applied // the trigger's writes of posts
}

// change is one acknowledged write of a comment.
type change struct {
	post  int
	child string
	at    time.Time // its commit (a delete's: when it was answered, as the client learns no commit time for it)
	delta int       // +1 created, -1 deleted, 0 edited
}

// applied is one write of a post by the per-event trigger.
type applied struct {
	post  int
	child string
	delta int
	at    time.Time
}

// runAggregate makes mode m's posts and comments, keeps their counts up to
// date the mode's way (tally's backfilled by a reconcile, the trigger's
// written as an app's hand-kept count), registers the mode's trigger,
// drives the load, waits for the counts to settle and measures.
func (e *env) runAggregate(ctx context.Context, m string) (report.AggregateMode, error) {
	o := e.o
	r := report.AggregateMode{Mode: m, Description: aggDescriptions[m], Existing: o.Existing}
	run, err := e.prepareAggregate(ctx, &r, m)
	if err != nil {
		return r, err
	}
	pick, err := newPicker(o.Popularity, len(run.ids), 1)
	if err != nil {
		return r, err
	}
	b := e.bridges[report.AggTrigger]
	if m == report.AggTally {
		b = e.bridges[report.ModeTally]
	}
	before := b.Stats()
	res := drive(ctx, run.ids, load{workers: o.Workers, rate: o.Rate, rest: o.Rest, pick: pick}, o.Duration, e.changer(run),
		func(el time.Duration, n int64, done bool) {
			e.report(m+" load", el, o.Duration, fmt.Sprintf("%d changes, %.0f/s", n, float64(n)/max(el.Seconds(), 0.001)), done)
		})
	if len(res.Acks) == 0 {
		return r, fmt.Errorf("no change was acknowledged (%d failed)", res.Errors)
	}
	settled, bounded := e.settleAggregate(ctx, run, res.End, before.Received+int64(len(res.Acks)))
	r.SettleWait, r.SettleBounded = ms(max(0, settled.Sub(res.End))), bounded
	if err := e.measureAggregate(ctx, &r, run, res, settled); err != nil {
		return r, err
	}
	if m != report.AggQuery {
		st := b.Stats()
		r.Events, r.Duplicated, r.Delayed = ptr(st.Received-before.Received), ptr(st.Duplicated-before.Duplicated), ptr(st.Delayed-before.Delayed)
	}
	return r, nil
}

// prepareAggregate starts mode m on a fresh emulator: its posts and their
// first comments made (for tally, backfilled, r.Backfill), its trigger
// registered, the run recorded for the per-event trigger, and every count
// of operations reset.
func (e *env) prepareAggregate(ctx context.Context, r *report.AggregateMode, m string) (*aggRun, error) {
	if err := e.freshEmulator(ctx); err != nil {
		return nil, err
	}
	run := &aggRun{mode: m, coll: aggCollections[m], index: map[string]int{}}
	prefix := fmt.Sprintf("agg-%s-%d", m, time.Now().UnixNano())
	for i := range e.o.Counters {
		id := fmt.Sprintf("%s-%d", prefix, i)
		run.ids = append(run.ids, id)
		run.index[id] = i
	}
	if err := e.makePosts(ctx, run); err != nil {
		return nil, err
	}
	if m == report.AggTally {
		b, err := e.backfill(ctx, run)
		if err != nil {
			return nil, err
		}
		r.Backfill = b
	}
	if err := e.registerAggregate(ctx, m, run.coll); err != nil {
		return nil, err
	}
	e.aggMu.Lock()
	e.agg = run
	e.aggMu.Unlock()
	for _, k := range []string{m, "reader"} {
		e.ops[k].Reset()
	}
	for _, in := range e.instances {
		if err := in.reset(); err != nil {
			return nil, err
		}
	}
	if m == report.AggTally {
		if err := e.pullFolds(); err != nil { // the backfill's: none are the load's
			return nil, err
		}
	}
	return run, nil
}

// registerAggregate has the emulator deliver the events of mode m's
// comments, now that the posts and their first comments are made (their
// own events would only slow the run's start): tally's to its Rollup
// instances, the trigger's to the per-event trigger.
func (e *env) registerAggregate(ctx context.Context, m, coll string) error {
	if e.o.Delivery != report.DeliveryEmulator || m == report.AggQuery {
		return nil
	}
	pattern := trigger.ChildPatterns(tallyLayout(e.o))[0]
	if m == report.AggTrigger {
		pattern = coll + "/{doc0}/" + aggChild + "/{child}"
	}
	t := emulator.Trigger{EventType: "google.cloud.firestore.document.v1.written", Pattern: pattern}
	return emulator.RegisterTrigger(ctx, e.emuHost, e.o.Project, m, t)
}

// makePosts creates the run's posts, each with o.Existing comments, in
// bulk: a post and its comments written by one of four bulk writers. The
// trigger's posts start with the count an app keeps by hand; tally's and
// the query's without one.
func (e *env) makePosts(ctx context.Context, run *aggRun) error {
	const writers = 4
	n := e.o.Existing
	run.live = make([][]string, len(run.ids))
	run.truth = make([]int64, len(run.ids))
	errs := make(chan error, writers)
	start := time.Now()
	var made sync.WaitGroup
	for w := range writers {
		made.Go(func() {
			bw := e.reader.BulkWriter(ctx)
			defer bw.End()
			for i := w; i < len(run.ids); i += writers {
				post := e.reader.Collection(run.coll).Doc(run.ids[i])
				doc := map[string]any{"title": "a post"}
				if run.mode == report.AggTrigger {
					doc[aggField] = n
				}
				if _, err := bw.Create(post, doc); err != nil {
					errs <- err
					return
				}
				live := make([]string, 0, n)
				for range n {
					c := post.Collection(aggChild).NewDoc()
					if _, err := bw.Create(c, map[string]any{"text": "an old comment", "n": 1}); err != nil {
						errs <- err
						return
					}
					live = append(live, c.ID)
				}
				run.live[i], run.truth[i] = live, int64(n)
				if w == 0 {
					e.reportCount(run.mode+" setup", start, i+1, len(run.ids), fmt.Sprintf("%d of %d posts with %d comments each", i+1, len(run.ids), n))
				}
			}
		})
	}
	made.Wait()
	e.report(run.mode+" setup", time.Since(start), time.Since(start), fmt.Sprintf("%d posts with %d comments each", len(run.ids), n), true)
	close(errs)
	if err := <-errs; err != nil {
		return fmt.Errorf("bench: make posts: %w", err)
	}
	return nil
}

// backfill computes every post's count from scratch, as `tally reconcile`
// does for an app that starts using tally, and says what it cost.
func (e *env) backfill(ctx context.Context, run *aggRun) (*report.Backfill, error) {
	ops := e.ops["reader"]
	ops.Reset()
	folder := fold.NewFolder(e.reader, tallyLayout(e.o), e.o.Window)
	start := time.Now()
	const workers = 16
	next := make(chan string)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for id := range next {
				if _, err := folder.Reconcile(ctx, run.coll+"/"+id); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	for i, id := range run.ids {
		select {
		case next <- id:
		case err := <-errs:
			close(next)
			wg.Wait()
			return nil, fmt.Errorf("bench: backfill: %w", err)
		}
		e.reportCount(run.mode+" backfill", start, i+1, len(run.ids), fmt.Sprintf("%d of %d posts reconciled", i+1, len(run.ids)))
	}
	close(next)
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return nil, fmt.Errorf("bench: backfill: %w", err)
	}
	e.report(run.mode+" backfill", time.Since(start), time.Since(start), fmt.Sprintf("%d posts reconciled", len(run.ids)), true)
	n := float64(len(run.ids))
	return &report.Backfill{Seconds: time.Since(start).Seconds(), Reads: ops.Reads(), Writes: ops.Writes(),
		ReadsPerPost: float64(ops.Reads()) / n}, nil
}

// postCounts reads every post's count as its document holds it (-1: none).
func (e *env) postCounts(ctx context.Context, run *aggRun) ([]int64, error) {
	out := make([]int64, len(run.ids))
	for from := 0; from < len(run.ids); from += 500 {
		var refs []*firestore.DocumentRef
		for _, id := range run.ids[from:min(from+500, len(run.ids))] {
			refs = append(refs, e.reader.Collection(run.coll).Doc(id))
		}
		snaps, err := e.reader.GetAll(ctx, refs)
		if err != nil {
			return nil, err
		}
		for i, s := range snaps {
			out[from+i] = -1
			if v, ok := s.Data()[aggField].(int64); ok {
				out[from+i] = v
			}
		}
	}
	return out, nil
}

// reportCount reports a phase that has done done of total things since
// start, its bound the time all of them would take at the pace so far.
func (e *env) reportCount(name string, start time.Time, done, total int, detail string) {
	el := time.Since(start)
	e.report(name, el, time.Duration(float64(el)*float64(total)/float64(max(done, 1))).Round(time.Second), detail, false)
}
