package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/internal/bridge"
	"github.com/tallycounters/tally/layout"
)

var descriptions = map[string]string{
	ModeRaw:    "client increments to random shards, no HTTP, no rollup (ceiling)",
	ModeTally:  "Increment + tally Rollup (snapshot folds)",
	ModeNaive:  "Increment + per-event rollup of the guides (total += after - before)",
	ModeSingle: "client increments to one document per counter, no shards",
}

// runMode prepares fresh counters for mode m, drives the load, waits for the
// rollup to settle and measures.
func (e *env) runMode(ctx context.Context, m string) (ModeResult, error) {
	o := e.o
	coll := map[string]string{ModeRaw: collRaw, ModeTally: collTally, ModeNaive: collNaive, ModeSingle: collSingle}[m]
	if coll == "" {
		return ModeResult{}, fmt.Errorf("unknown mode %q", m)
	}
	run := fmt.Sprintf("bench-%s-%d", m, time.Now().UnixNano())
	ids := make([]string, o.Counters)
	for i := range ids {
		ids[i] = fmt.Sprintf("%s-%d", run, i)
		// Counters exist before the load, as an admin would create them.
		var err error
		if m == ModeSingle {
			_, err = e.reader.Collection(coll).Doc(ids[i]).Create(ctx, map[string]any{layout.FieldTotal: 0})
		} else {
			_, err = e.reader.Collection(coll).Doc(ids[i]).Create(ctx, map[string]any{layout.FieldNumShards: o.Shards, layout.FieldTotal: 0})
		}
		if err != nil {
			return ModeResult{}, err
		}
	}
	client, ops := e.clients[m], e.ops[m]
	inc := e.incrementer(m, coll, client)
	ops.Reset()
	e.obs.takeDelays()
	var before bridge.Stats
	if b := e.bridges[m]; b != nil {
		before = b.Stats()
	}
	for _, in := range e.instances {
		in.reset()
	}
	res := drive(ctx, ids, o.Workers, o.Rate, o.Duration, inc, func(el time.Duration, n int64, done bool) {
		e.report(m+" load", el, o.Duration, fmt.Sprintf("%d increments, %.0f/s", n, float64(n)/max(el.Seconds(), 0.001)), done)
	})
	during := make([]int64, len(e.instances)) // requests each instance took while the load ran
	for i, in := range e.instances {
		during[i] = in.requests.Load()
	}
	r := ModeResult{Mode: m, Description: descriptions[m], Seconds: res.End.Sub(res.Start).Seconds(),
		Acked: int64(len(res.Acks)), Errors: res.Errors, HasRollup: m == ModeTally || m == ModeNaive}
	if r.Acked == 0 {
		return r, fmt.Errorf("no increment was acknowledged (%d errors)", res.Errors)
	}
	r.IncrPerSec = float64(r.Acked) / r.Seconds
	slices.Sort(res.Latencies)
	r.LatencyP50, r.LatencyP99 = ms(percentile(res.Latencies, .5)), ms(percentile(res.Latencies, .99))
	r.HotDocPerS = float64(hottest(res.Acks, m == ModeSingle)) / r.Seconds

	r.IncrSeries = perSecond(ackTimes(res.Acks), res.Start, int(res.End.Sub(res.Start)/time.Second)+1)
	settled, bounded := e.settle(ctx, m, coll, ids, res)
	r.SettleWait, r.SettleBounded = ms(max(0, settled.Sub(res.End))), bounded
	e.measureParents(&r, coll, ids, res, settled)
	if m == ModeTally {
		var most int
		var refused int64
		for i, in := range e.instances {
			r.InstanceEventsPerSec = append(r.InstanceEventsPerSec, float64(during[i])/r.Seconds)
			r.InstanceInflightMax = append(r.InstanceInflightMax, int(in.most.Load()))
			most = max(most, int(in.most.Load()))
			refused += in.refused.Load()
		}
		r.InflightMax, r.Refused = ptr(most), ptr(refused)
	}
	if err := e.finalTotals(ctx, &r, m, coll, ids); err != nil {
		return r, err
	}
	r.ReadsPerIncr = float64(ops.Reads()) / float64(r.Acked)
	r.WritesPerIncr = float64(ops.Writes()) / float64(r.Acked)
	if d := e.obs.takeDelays(); len(d) > 0 && r.HasRollup {
		slices.Sort(d)
		r.DeliveryP50, r.DeliveryP99 = ptr(ms(percentile(d, .5))), ptr(ms(percentile(d, .99)))
	}
	if b := e.bridges[m]; b != nil {
		st := b.Stats()
		r.Events, r.Duplicated, r.Delayed = ptr(st.Received-before.Received), ptr(st.Duplicated-before.Duplicated), ptr(st.Delayed-before.Delayed)
	}
	return r, nil
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
	case ModeRaw:
		return func(ctx context.Context, id string) (int, error) {
			n := rand.IntN(e.o.Shards)
			_, err := c.Collection(coll).Doc(id).Collection(layout.ShardsCollection).Doc(fmt.Sprint(n)).
				Set(ctx, map[string]any{layout.DefaultShardField: firestore.Increment(1)}, firestore.MergeAll)
			return n, err
		}
	case ModeSingle:
		return func(ctx context.Context, id string) (int, error) {
			wr, err := c.Collection(coll).Doc(id).Set(ctx, map[string]any{layout.FieldTotal: firestore.Increment(1)}, firestore.MergeAll)
			if err == nil {
				e.obs.added(coll+"/"+id, wr.UpdateTime, 1)
			}
			return -1, err
		}
	}
	url := e.funcsURL + "/" + m + "/Increment"
	if m == ModeTally && e.o.URL != "" {
		url = e.o.URL
	}
	return httpIncrement(url, e.o.Workers)
}

// httpIncrement adds 1 through the Increment function at url, over up to
// workers connections kept open.
func httpIncrement(url string, workers int) incrementFunc {
	hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: workers}}
	return func(ctx context.Context, id string) (int, error) {
		body, _ := json.Marshal(map[string]any{"counter": id, "by": 1})
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := hc.Do(req)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		var out struct{ Shard int }
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusOK {
			return 0, fmt.Errorf("increment: status %d", resp.StatusCode)
		}
		return out.Shard, nil
	}
}

// hottest is the most writes any one document took: a shard, or with
// single, the counter's one document.
func hottest(acks []ack, single bool) int {
	type doc struct{ counter, shard int }
	n := map[doc]int{}
	best := 0
	for _, a := range acks {
		d := doc{a.Counter, a.Shard}
		if single {
			d.shard = 0
		}
		n[d]++
		best = max(best, n[d])
	}
	return best
}
