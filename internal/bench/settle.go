package bench

import (
	"context"
	"slices"
	"time"

	"github.com/tallycounters/tally/layout"
)

// settle waits until the mode's totals stop moving after the load: exact, or
// unchanged for three seconds with no event left in flight. It returns when
// that happened.
func (e *env) settle(ctx context.Context, m, coll string, ids []string, res loadResult) time.Time {
	if m == ModeRaw {
		return res.End
	}
	want := int64(len(res.Acks))
	deadline := time.Now().Add(90 * time.Second)
	var last int64 = -1
	stableSince := time.Now()
	for time.Now().Before(deadline) {
		total := e.sumTotals(ctx, coll, ids)
		idle := true
		if b := e.bridges[m]; b != nil {
			idle = b.Stats().Received > 0 && b.Idle()
		}
		if total != last {
			last, stableSince = total, time.Now()
		}
		if (total == want || time.Since(stableSince) > 3*time.Second) && idle && e.observed(coll, ids, total) {
			return time.Now()
		}
		time.Sleep(100 * time.Millisecond)
	}
	return time.Now()
}

// sumTotals reads the counters' parents and adds up their totals.
func (e *env) sumTotals(ctx context.Context, coll string, ids []string) int64 {
	var sum int64
	for _, id := range ids {
		snap, err := e.reader.Collection(coll).Doc(id).Get(ctx)
		if err != nil {
			continue
		}
		n, _ := snap.Data()[layout.FieldTotal].(int64)
		sum += n
	}
	return sum
}

// observed reports whether the observer has seen the parents reach total.
func (e *env) observed(coll string, ids []string, total int64) bool {
	var seen int64
	for _, id := range ids {
		w := e.obs.of(coll+"/"+id, time.Time{})
		if len(w) > 0 {
			seen += w[len(w)-1].Total
		}
	}
	return seen == total
}

// finalTotals records the totals and the shards' sum after settling.
func (e *env) finalTotals(ctx context.Context, r *ModeResult, m, coll string, ids []string) error {
	for _, id := range ids {
		docs, err := e.reader.Collection(coll).Doc(id).Collection(layout.ShardsCollection).Documents(ctx).GetAll()
		if err != nil {
			return err
		}
		for _, d := range docs {
			n, _ := d.Data()[layout.DefaultShardField].(int64)
			r.ShardSum += n
		}
	}
	if m == ModeRaw {
		r.Total = r.ShardSum
	} else {
		r.Total = e.sumTotals(ctx, coll, ids)
	}
	if m == ModeSingle {
		r.ShardSum = r.Total
	}
	r.Drift = r.Total - r.Acked
	return nil
}

// measureParents derives parent writes and rollup lag from the observer.
func (e *env) measureParents(r *ModeResult, coll string, ids []string, res loadResult, settled time.Time) {
	if r.Mode == ModeRaw {
		return
	}
	seconds := int(settled.Sub(res.Start)/time.Second) + 1
	r.ParentSeries = make([]int, seconds)
	ackTimes := make([][]time.Time, len(ids))
	for _, a := range res.Acks {
		ackTimes[a.Counter] = append(ackTimes[a.Counter], a.At)
	}
	var all []time.Duration
	exactAt := res.End
	gap := time.Duration(-1)
	var during int
	for i, id := range ids {
		writes := e.obs.of(coll+"/"+id, res.Start)
		var times []time.Time
		for _, w := range writes {
			times = append(times, w.At)
			if !w.At.After(res.End) {
				during++
			}
		}
		r.ParentTotal += len(writes)
		for k := 1; k < len(writes); k++ {
			if d := writes[k].At.Sub(writes[k-1].At); gap < 0 || d < gap {
				gap = d
			}
		}
		for s, n := range perSecond(times, res.Start, seconds) {
			r.ParentSeries[s] += n
			r.ParentPeak = max(r.ParentPeak, r.ParentSeries[s])
		}
		slices.SortFunc(ackTimes[i], time.Time.Compare)
		l, unreached := lags(ackTimes[i], writes)
		all = append(all, l...)
		r.Unreached += unreached
		if n := len(writes); n == 0 || writes[n-1].Total != int64(len(ackTimes[i])) {
			exactAt = time.Time{}
		} else if exactAt != (time.Time{}) && writes[n-1].At.After(exactAt) {
			exactAt = writes[n-1].At
		}
		for t, k := res.Start, 0; !t.After(settled); t, k = t.Add(100*time.Millisecond), k+1 {
			for len(r.LagSeries) <= k {
				r.LagSeries = append(r.LagSeries, 0)
			}
			acked := countUpTo(ackTimes[i], t)
			r.LagSeries[k] += float64(int64(acked) - totalAt(writes, t))
		}
	}
	r.ParentPerS = float64(during) / r.Seconds
	r.ParentPerI = float64(r.ParentTotal) / float64(r.Acked)
	r.ParentGap = -1
	if gap >= 0 {
		r.ParentGap = ms(gap)
	}
	slices.Sort(all)
	r.LagP50, r.LagP99 = ms(percentile(all, .5)), ms(percentile(all, .99))
	r.SettleLag = -1
	if exactAt != (time.Time{}) {
		r.SettleLag = ms(max(0, exactAt.Sub(res.End)))
	}
}
