package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"time"

	"cloud.google.com/go/firestore"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/tools/bench/report"
	"github.com/tallycounters/tally/internal/tools/bridge"
	"github.com/tallycounters/tally/rollup"
)

var descriptions = map[string]string{
	report.ModeRaw:   "client increments to random shards, no HTTP, no rollup (ceiling)",
	report.ModeTally: "Increment + tally Rollup (snapshot folds)",
	report.ModeNaive: "Increment + per-event rollup of the guides (total += after - before)",
	report.ModePlain: "the app's own increment of the counted field on its document: no shard, no function",
}

// collections of the modes.
var collections = map[string]string{report.ModeRaw: collRaw, report.ModeTally: collTally, report.ModeNaive: collNaive, report.ModePlain: collPlain}

// runMode prepares fresh counters for mode m, drives the load, waits for the
// rollup to settle and measures.
func (e *env) runMode(ctx context.Context, m string) (report.Mode, error) {
	o := e.o
	st, err := e.prepareMode(ctx, m)
	if st.lis != nil {
		defer st.lis.stop()
	}
	if err != nil {
		return report.Mode{}, err
	}
	coll, ids := st.coll, st.ids
	res := drive(ctx, ids, load{workers: o.Workers, rate: o.Rate, rest: o.Rest, pick: st.pick}, o.Duration, st.inc,
		func(el time.Duration, n int64, done bool) {
			e.report(m+" load", el, o.Duration, fmt.Sprintf("%d increments, %.0f/s", n, float64(n)/max(el.Seconds(), 0.001)), done)
		})
	var during []InstanceStats // what each instance took while the load ran
	if m == report.ModeTally {
		if during, err = e.instanceStats(); err != nil {
			return report.Mode{}, err
		}
	}
	r, err := e.loadFigures(m, res)
	if err != nil {
		return r, err
	}
	if m == report.ModeTally && o.InDocument {
		r.InDocumentShare = ptr(float64(e.inDocument.Load()) / float64(r.Acked))
	}
	settled, bounded := e.settle(ctx, m, coll, ids, res)
	r.SettleWait, r.SettleBounded = ms(max(0, settled.Sub(res.End))), bounded
	if m == report.ModeTally {
		if err := e.pullFolds(); err != nil {
			return r, err
		}
	}
	e.measureParents(&r, coll, ids, res, settled)
	e.hotSpots(&r, coll, ids, res)
	r.ShardsAtEnd = e.shardsAtEnd(ctx, m, coll, ids)
	if err := e.finalTotals(ctx, &r, m, coll, ids, res); err != nil {
		return r, err
	}
	if st.lis != nil {
		if err := st.lis.err(); err != nil {
			return r, err
		}
		r.Visible = visibleLatency(res.Acks, st.lis, len(ids), r.Seconds, o.Window)
		r.ListenerReadsPerIncr = ptr(float64(st.lis.ops.Reads()) / float64(r.Acked))
	}
	if err := e.opsFigures(&r, m, during); err != nil {
		return r, err
	}
	if err := e.billFigures(&r, m); err != nil {
		return r, err
	}
	if d := e.obs.takeDelays(); len(d) > 0 && r.HasRollup {
		slices.Sort(d)
		r.DeliveryP50, r.DeliveryP99 = ptr(ms(percentile(d, .5))), ptr(ms(percentile(d, .99)))
	}
	if b := e.bridges[m]; b != nil {
		now := b.Stats()
		r.Events, r.Duplicated, r.Delayed = ptr(now.Received-st.bridge.Received), ptr(now.Duplicated-st.bridge.Duplicated), ptr(now.Delayed-st.bridge.Delayed)
	}
	return r, nil
}

// modeStart is a mode ready for its load: its counters, how to increment
// them and pick one, its listeners, and its bridge's figures before.
type modeStart struct {
	coll   string
	ids    []string
	inc    incrementFunc
	pick   picker
	lis    *listeners
	bridge bridge.Stats
}

// prepareMode starts mode m on a fresh emulator: its counters made (or
// left to their first increment, as new ones are), primed for a burst,
// listened to, and every count of operations reset. The listeners, if
// any, are in the result even on an error, to be stopped.
func (e *env) prepareMode(ctx context.Context, m string) (modeStart, error) {
	o := e.o
	st := modeStart{coll: e.collOf(m)}
	if st.coll == "" {
		return st, fmt.Errorf("unknown mode %q", m)
	}
	if err := e.freshEmulator(ctx); err != nil {
		return st, err
	}
	st.ids = e.counterIDs(m, fmt.Sprintf("bench-%s-%d", m, time.Now().UnixNano()))
	if o.Shards > 0 || e.fieldsOf(m) > 0 { // else each is made by its first increment, as a new counter is
		if err := e.createCounters(ctx, m, st.coll, st.ids); err != nil {
			return st, err
		}
		if m == report.ModeTally && o.Timed {
			if err := e.foldPosts(ctx, st.coll, st.ids); err != nil {
				return st, err
			}
		}
		if m == report.ModeTally && o.InDocument {
			// An app's posts are made before their likes: none is written
			// within the spacing of its making.
			time.Sleep(o.Window)
		}
	}
	st.inc = e.incrementer(m, st.coll, e.clients[m])
	if o.Burst {
		if err := e.prime(ctx, m, st.ids, st.inc); err != nil {
			return st, err
		}
	}
	if o.Listeners && m != report.ModeRaw {
		start := startListeners
		if o.Feed {
			start = startFeed
		}
		var err error
		if st.lis, err = start(ctx, e.host, o.Project, st.coll, st.ids); err != nil {
			return st, err
		}
	}
	var err error
	if st.pick, err = newPicker(o.Popularity, len(st.ids), max(1, e.fieldsOf(m))); err != nil {
		return st, err
	}
	e.ops[m].Reset()
	e.inDocument.Store(0)
	for _, mt := range e.meters {
		mt.reset()
	}
	e.obs.takeDelays()
	if b := e.bridges[m]; b != nil {
		st.bridge = b.Stats()
	}
	if m == report.ModeTally {
		for _, in := range e.instances {
			if err := in.reset(); err != nil {
				return st, err
			}
		}
		if e.incPool != nil {
			if err := e.incPool.reset(); err != nil {
				return st, err
			}
			e.incPool.throttledAt, _ = e.incPool.throttled()
		}
	}
	return st, nil
}

// loadFigures is what mode m's load itself shows: increments taken, their
// latency, the hottest document, increments a second.
func (e *env) loadFigures(m string, res loadResult) (report.Mode, error) {
	r := report.Mode{Mode: m, Description: descriptions[m], Seconds: res.End.Sub(res.Start).Seconds(),
		Acked: int64(len(res.Acks)), Errors: res.Errors, HasRollup: m == report.ModeTally || m == report.ModeNaive,
		Answers: answersByStatus(res.Statuses)}
	if r.Acked == 0 {
		return r, fmt.Errorf("no increment was acknowledged (%d answered otherwise)", res.Errors)
	}
	r.IncrPerSec = float64(r.Acked) / r.Seconds
	slices.Sort(res.Latencies)
	r.LatencyP50, r.LatencyP99 = ms(percentile(res.Latencies, .5)), ms(percentile(res.Latencies, .99))
	r.HotDocPerS = float64(hottest(res.Acks, m == report.ModePlain, func(i int) int { return e.docOf(m, i) })) / r.Seconds
	r.IncrSeries = perSecond(ackTimes(res.Acks), res.Start, int(res.End.Sub(res.Start)/time.Second)+1)
	return r, nil
}

// opsFigures sets the reads, writes, deletes and failed writes per
// increment, the load's and, for tally, its Rollup instances' (during:
// what they took while the load ran), and their price.
func (e *env) opsFigures(r *report.Mode, m string, during []InstanceStats) error {
	ops := e.ops[m]
	reads, writes, deletes, failed := ops.Reads(), ops.Writes(), ops.Deletes(), ops.Failed()
	r.IncrementTxPerIncr = ptr(float64(ops.Transactions()) / float64(r.Acked))
	if v := ops.Verifies(); v > 0 {
		r.VerifiesPerIncr = ptr(float64(v) / float64(r.Acked))
	}
	if m == report.ModeTally {
		after, err := e.instanceStats()
		if err != nil {
			return err
		}
		e.instanceFigures(r, during, after)
		var rr, rw int64
		for _, st := range after {
			rr, rw = rr+st.Reads, rw+st.Writes
			deletes, failed = deletes+st.Deletes, failed+st.Failed
		}
		reads, writes = reads+rr, writes+rw
		if e.incPool != nil {
			incs, err := e.incPool.stats()
			if err != nil {
				return err
			}
			var verifies int64
			for _, st := range incs {
				reads, writes, deletes, failed, verifies = reads+st.Reads, writes+st.Writes, deletes+st.Deletes, failed+st.Failed, verifies+st.Verifies
			}
			if verifies > 0 {
				r.VerifiesPerIncr = ptr(float64(ops.Verifies()+verifies) / float64(r.Acked))
			}
		}
		if r.ParentTotal != nil && *r.ParentTotal > 0 {
			n := float64(*r.ParentTotal)
			r.ReadsPerFold, r.WritesPerFold = ptr(float64(rr)/n), ptr(float64(rw)/n)
		}
	}
	r.ReadsPerIncr = float64(reads) / float64(r.Acked)
	r.WritesPerIncr = float64(writes) / float64(r.Acked)
	r.DeletesPerIncr = float64(deletes) / float64(r.Acked)
	r.FailedPerIncr = float64(failed) / float64(r.Acked)
	r.PerMillion = e.o.Prices.PerMillion(r.ReadsPerIncr, r.WritesPerIncr-r.DeletesPerIncr+r.FailedPerIncr, r.DeletesPerIncr)
	return nil
}

// createCounters creates the parents of ids before the load, as an admin
// would (with settings.Shards), or the documents the counts are on, as the
// app would (without, they have none), in bulk: four bulk writers at
// once, each ramping up on its own.
func (e *env) createCounters(ctx context.Context, m, coll string, ids []string) error {
	const writers = 4
	errs := make(chan error, writers)
	for w := range writers {
		go func() {
			bw := e.reader.BulkWriter(ctx)
			var jobs []*firestore.BulkWriterJob
			n := max(e.fieldsOf(m), 1) // one document for the counts next to each other
			for i := w * n; i < len(ids); i += writers * n {
				doc := map[string]any{core.FieldNumShards: e.o.Shards, core.FieldTotal: 0}
				switch {
				case e.fieldsOf(m) > 0:
					doc = map[string]any{"title": "a post"}
					if e.o.Shards > 0 && m == report.ModeTally {
						doc[core.FieldBookkeeping] = map[string]any{core.FieldNumShards: e.o.Shards}
					}
					for _, f := range fieldNames(n) {
						doc[f] = 0
					}
				case m == report.ModePlain:
					doc = map[string]any{core.FieldTotal: 0}
				}
				path, _ := target(coll, ids[i])
				j, err := bw.Create(e.reader.Doc(path), doc)
				if err != nil {
					bw.End()
					errs <- err
					return
				}
				jobs = append(jobs, j)
			}
			bw.End()
			for _, j := range jobs {
				if _, err := j.Results(); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range writers {
		if err := <-errs; err != nil {
			return fmt.Errorf("bench: create counters: %w", err)
		}
	}
	return nil
}

// answersByStatus names each answer's status: "200", "503", ... and "none"
// for requests that got no answer.
func answersByStatus(s map[int]int64) map[string]int64 {
	out := map[string]int64{}
	for code, n := range s {
		k := strconv.Itoa(code)
		if code == 0 {
			k = "none"
		}
		out[k] = n
	}
	return out
}

// ackTimes lists when each increment was acknowledged.
func ackTimes(acks []ack) []time.Time {
	out := make([]time.Time, len(acks))
	for i, a := range acks {
		out[i] = a.At
	}
	return out
}

// incrementer is how mode m adds 1 to a counter.
func (e *env) incrementer(m, coll string, c *firestore.Client) incrementFunc {
	switch m {
	case report.ModeRaw:
		shards := e.rawShards()
		return func(ctx context.Context, id string, by int64) (answer, error) {
			n := rand.IntN(shards)
			wr, err := c.Collection(coll).Doc(id).Collection(core.ShardsCollection).Doc(fmt.Sprint(n)).
				Set(ctx, map[string]any{core.DefaultShardField: firestore.Increment(by)}, firestore.MergeAll)
			return clientAnswer(n, wr, err)
		}
	case report.ModePlain:
		return func(ctx context.Context, id string, by int64) (answer, error) {
			path, field := target(coll, id)
			ref := c.Doc(path)
			var wr *firestore.WriteResult
			var err error
			if e.fieldsOf(m) > 0 { // the app's post: updateDoc(post, {likes: increment(1)})
				wr, err = ref.Update(ctx, []firestore.Update{{Path: field, Value: firestore.Increment(by)}})
			} else { // a counter made by its first increment, as tally's are
				wr, err = ref.Set(ctx, map[string]any{field: firestore.Increment(by)}, firestore.MergeAll)
			}
			if err == nil {
				e.obs.added(observed(coll, id), wr.UpdateTime, by)
			}
			return clientAnswer(-1, wr, err)
		}
	}
	if m == report.ModeTally && e.o.ClientWrites {
		return e.clientIncrement(coll, c)
	}
	url := e.funcsURL + "/" + m + "/Increment"
	if m == report.ModeTally && e.o.URL != "" {
		url = e.o.URL
	}
	return httpIncrement(url, e.o.Workers, coll, e.o.Keys, func(id string, at time.Time, by int64) {
		e.inDocument.Add(1)
		e.obs.added(observed(coll, id), at, by) // no fold reports it
	})
}

// clientAnswer is how a client's own write to shard (-1: the counter's one
// document) was answered: 200, or, for a write Firestore refused whole
// (ABORTED: the contention stand-in's, or another precondition), 503, as
// Increment answers it, so that the client tries again; any other failure
// is no answer at all.
func clientAnswer(shard int, wr *firestore.WriteResult, err error) (answer, error) {
	switch {
	case err == nil:
		return answer{Shard: shard, Status: http.StatusOK, Committed: wr.UpdateTime}, nil
	case status.Code(err) == codes.Aborted:
		return answer{Shard: shard, Status: http.StatusServiceUnavailable, RetryAfter: time.Second}, nil
	}
	return answer{}, err
}

// rawShards is how many shards the raw mode writes to at random: those
// given, or, for new counters, as many as a counter grows to.
func (e *env) rawShards() int {
	if e.o.Shards > 0 {
		return e.o.Shards
	}
	return rollup.DefaultGrow.Max
}

// httpIncrement adds through the Increment function at url, over up to
// workers connections kept open, to counters of coll, each request with
// an Idempotency-Key of its own if keys; inDocument hears each increment
// written into the counted document itself, with its commit time.
func httpIncrement(url string, workers int, coll string, keys bool, inDocument func(id string, at time.Time, by int64)) incrementFunc {
	hc := &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: workers}}
	return func(ctx context.Context, id string, by int64) (answer, error) {
		want := map[string]any{"counter": id, "by": by}
		if coll == collPosts {
			want["counter"], want["field"] = target(coll, id)
		}
		body, _ := json.Marshal(want)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if keys {
			req.Header.Set("Idempotency-Key", strconv.FormatUint(rand.Uint64(), 36))
		}
		resp, err := hc.Do(req)
		if err != nil {
			return answer{}, err
		}
		defer resp.Body.Close()
		a := answer{Status: resp.StatusCode}
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s >= 0 {
			a.RetryAfter = time.Duration(s) * time.Second
		}
		var out struct {
			Shard      int
			Committed  time.Time
			InDocument bool `json:"in_document"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil && resp.StatusCode == http.StatusOK {
			return answer{}, fmt.Errorf("increment: a 200 without its body: %w", err)
		}
		a.Shard, a.Committed = out.Shard, out.Committed
		if out.InDocument && resp.StatusCode == http.StatusOK {
			inDocument(id, out.Committed, by)
		}
		return a, nil
	}
}

// hottest is the most writes any one document took: a shard, or with
// single (plain's), the counted document itself. docOf says which document a
// counter's shards are under.
func hottest(acks []ack, single bool, docOf func(int) int) int {
	type doc struct{ counter, shard int }
	n := map[doc]int{}
	best := 0
	for _, a := range acks {
		d := doc{docOf(a.Counter), a.Shard}
		if single {
			d.shard = 0
		}
		n[d]++
		best = max(best, n[d])
	}
	return best
}
