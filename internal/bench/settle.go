package bench

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/tallycounters/tally/layout"
)

// DefaultSettle bounds the wait for a mode's total after its load.
const DefaultSettle = 30 * time.Second

// settle waits, after the load, until the mode's totals have settled: exact
// with every event answered, or, for the per-event rollup, whose total need
// not ever be exact (it counts duplicates), every event answered and the
// total still for a second; at most o.Settle. The shards have settled when
// the load ends: increments are acknowledged after their write. It returns
// when it stopped and whether the bound stopped it.
func (e *env) settle(ctx context.Context, m, coll string, ids []string, res loadResult) (time.Time, bool) {
	if m == ModeRaw || m == ModeSingle {
		return res.End, false
	}
	bound := settleBound(e.o)
	want := int64(len(res.Acks))
	start := time.Now()
	var last int64 = -1
	stableSince := start
	for {
		total := e.sumTotals(ctx, coll, ids)
		idle := true
		if b := e.bridges[m]; b != nil {
			idle = b.Idle()
		}
		if total != last {
			last, stableSince = total, time.Now()
		}
		exact := total == want
		if idle && e.observed(coll, ids, total) && (exact || m != ModeTally && time.Since(stableSince) >= time.Second) {
			e.report(m+" settle", time.Since(start), bound, fmt.Sprintf("total %d of %d acknowledged", total, want), true)
			return time.Now(), false
		}
		if time.Since(start) >= bound || ctx.Err() != nil {
			e.report(m+" settle", bound, bound, fmt.Sprintf("total %d of %d acknowledged: gave up", total, want), true)
			return time.Now(), true
		}
		e.report(m+" settle", time.Since(start), bound, fmt.Sprintf("total %d of %d acknowledged", total, want), false)
		time.Sleep(100 * time.Millisecond)
	}
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
	var during, total, peak, unreached int
	for i, id := range ids {
		writes := e.obs.of(coll+"/"+id, res.Start)
		var times []time.Time
		for _, w := range writes {
			times = append(times, w.At)
			if !w.At.After(res.End) {
				during++
			}
		}
		total += len(writes)
		for k := 1; k < len(writes); k++ {
			if d := writes[k].At.Sub(writes[k-1].At); gap < 0 || d < gap {
				gap = d
			}
		}
		for s, n := range perSecond(times, res.Start, seconds) {
			r.ParentSeries[s] += n
			peak = max(peak, r.ParentSeries[s])
		}
		slices.SortFunc(ackTimes[i], time.Time.Compare)
		l, u := lags(ackTimes[i], writes)
		all = append(all, l...)
		unreached += u
		if n := len(writes); n == 0 || writes[n-1].Total != int64(len(ackTimes[i])) {
			exactAt = time.Time{}
		} else if exactAt != (time.Time{}) && writes[n-1].At.After(exactAt) {
			exactAt = writes[n-1].At
		}
		for t, k := res.Start, 0; !t.After(settled); t, k = t.Add(100*time.Millisecond), k+1 {
			for len(r.LagSeries) <= k {
				r.LagSeries = append(r.LagSeries, 0)
			}
			r.LagSeries[k] += float64(int64(countUpTo(ackTimes[i], t)) - totalAt(writes, t))
		}
	}
	r.ParentPerS = ptr(float64(during) / r.Seconds)
	r.ParentPerI = ptr(float64(total) / float64(r.Acked))
	r.ParentTotal, r.ParentPeak = ptr(total), ptr(peak)
	if gap >= 0 {
		r.ParentGap = ptr(ms(gap))
	}
	if !r.HasRollup {
		return
	}
	slices.Sort(all)
	r.LagP50, r.LagP99 = ptr(ms(percentile(all, .5))), ptr(ms(percentile(all, .99)))
	r.Unreached = ptr(unreached)
	if exactAt != (time.Time{}) {
		r.SettleLag = ptr(ms(max(0, exactAt.Sub(res.End))))
	}
}
