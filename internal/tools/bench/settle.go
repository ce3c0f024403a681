package bench

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"cloud.google.com/go/firestore"
	"google.golang.org/api/iterator"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/tools/bench/report"
)

// DefaultSettle bounds the wait for a mode's total after its load.
const DefaultSettle = 30 * time.Second

// settle waits, after the load, until the mode's totals have settled: exact
// with every event answered, or, for the per-event rollup, whose total need
// not ever be exact (it counts duplicates), every event answered and the
// total still for a second; at most o.Settle. It follows the totals through
// the writes the observer hears of, and confirms them with one read of
// every parent. The shards have settled when the load ends: increments are
// acknowledged after their write. It returns when it stopped and whether
// the bound stopped it.
func (e *env) settle(ctx context.Context, m, coll string, ids []string, res loadResult) (time.Time, bool) {
	if m == report.ModeRaw || m == report.ModePlain {
		return res.End, false
	}
	bound := settleBound(e.o)
	want := int64(len(res.Acks))
	start := time.Now()
	var last int64 = -1
	stableSince := start
	for {
		if m == report.ModeTally {
			e.pullFolds()
		}
		var seen int64
		for _, id := range ids {
			seen += e.obs.total(observed(coll, id))
		}
		idle := true
		if b := e.bridges[m]; b != nil {
			idle = b.Idle()
		}
		if seen != last {
			last, stableSince = seen, time.Now()
		}
		if idle && (seen == want || m != report.ModeTally && time.Since(stableSince) >= time.Second) && e.sumTotals(ctx, coll, ids) == seen {
			e.report(m+" settle", time.Since(start), bound, fmt.Sprintf("total %d of %d acknowledged", seen, want), true)
			return time.Now(), false
		}
		if time.Since(start) >= bound || ctx.Err() != nil {
			e.report(m+" settle", bound, bound, fmt.Sprintf("total %d of %d acknowledged: gave up", seen, want), true)
			return time.Now(), true
		}
		e.report(m+" settle", time.Since(start), bound, fmt.Sprintf("total %d of %d acknowledged", seen, want), false)
		time.Sleep(100 * time.Millisecond)
	}
}

// totals reads the counters' parents, a few hundred at a time, and
// returns each one's total.
func (e *env) totals(ctx context.Context, coll string, ids []string) []int64 {
	out := make([]int64, len(ids))
	const batch = 300
	for lo := 0; lo < len(ids); lo += batch {
		hi := min(lo+batch, len(ids))
		refs := make([]*firestore.DocumentRef, 0, hi-lo)
		fields := make([]string, 0, hi-lo)
		for _, id := range ids[lo:hi] {
			doc, field := target(coll, id)
			refs = append(refs, e.reader.Doc(doc))
			fields = append(fields, field)
		}
		snaps, err := e.reader.GetAll(ctx, refs)
		if err != nil {
			continue
		}
		for i, s := range snaps {
			if s.Exists() {
				out[lo+i], _ = s.Data()[fields[i]].(int64)
			}
		}
	}
	return out
}

// sumTotals adds up the counters' totals.
func (e *env) sumTotals(ctx context.Context, coll string, ids []string) int64 {
	var sum int64
	for _, n := range e.totals(ctx, coll, ids) {
		sum += n
	}
	return sum
}

// shardSums sums the shards of each counter, reading every shard of the
// mode's collection in one scan of the shards collection group. (The
// emulator answers a query in time proportional to every document of its
// collection group, so one aggregation query per counter would take
// minutes over ten thousand counters.) Untouched counters have no shards
// and sum to 0.
func (e *env) shardSums(ctx context.Context, coll string, ids []string) ([]int64, error) {
	index := make(map[string]int, len(ids))
	for i, id := range ids {
		index[id] = i
	}
	out := make([]int64, len(ids))
	fields := []string{core.DefaultShardField}
	if coll == collPosts {
		fields = fieldNames(e.o.Fields)
	}
	it := e.reader.CollectionGroup(core.ShardsCollection).Select(fields...).Documents(ctx)
	defer it.Stop()
	for {
		snap, err := it.Next()
		if errors.Is(err, iterator.Done) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("bench: reading the shards: %w", err)
		}
		parent := snap.Ref.Parent.Parent
		if coll == collPosts {
			parent, _ = tallyLayout(e.o).Owner(snap.Ref) // posts/{p}/lives/{life}/shards/{n}
		}
		if parent == nil || parent.Parent.ID != coll {
			continue
		}
		for f, v := range snap.Data() {
			key := parent.ID + "." + f // a count on a document
			if coll != collPosts && f == core.DefaultShardField {
				key = parent.ID
			}
			if i, ok := index[key]; ok {
				n, _ := v.(int64)
				out[i] += n
			}
		}
	}
}

// finalTotals records the totals and the shards' sum after settling, and
// how many increments answered other than 200 were written anyway: by
// counter, what its shards hold beyond the increments answered 200. Those a
// refusal (429, 503) accounts for break the contract; an unknown outcome
// (504, or no answer) may rightly have been written.
func (e *env) finalTotals(ctx context.Context, r *report.Mode, m, coll string, ids []string, res loadResult) error {
	totals := e.totals(ctx, coll, ids)
	acked := make([]int64, len(ids))
	for _, a := range res.Acks {
		acked[a.Counter]++
	}
	sums := totals
	if m != report.ModePlain {
		var err error
		if sums, err = e.shardSums(ctx, coll, ids); err != nil {
			return err
		}
	}
	for i := range ids {
		r.ShardSum += sums[i]
		r.Total += totals[i]
		extra := max(0, sums[i]-acked[i])
		r.NonOKWritten += extra
		r.RefusedWritten += max(0, extra-res.PerCounter[i].Other)
	}
	if m == report.ModeRaw {
		r.Total = r.ShardSum
	}
	r.Drift = r.Total - r.Acked
	return nil
}

// instanceStats asks every Rollup instance what it did.
func (e *env) instanceStats() ([]InstanceStats, error) { return statsOf(e.instances) }

// statsOf asks each instance what it did since its last reset.
func statsOf(instances []*instance) ([]InstanceStats, error) {
	out := make([]InstanceStats, len(instances))
	for i, in := range instances {
		var err error
		if out[i], err = in.stats(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// instanceFigures records, per Rollup instance, the events it took per
// second while the load ran, the most it held at once, what it refused,
// and its peak memory.
func (e *env) instanceFigures(r *report.Mode, during, after []InstanceStats) {
	var most int
	var refused int64
	for i, st := range after {
		r.InstanceEventsPerSec = append(r.InstanceEventsPerSec, float64(during[i].Requests)/r.Seconds)
		r.InstanceInflightMax = append(r.InstanceInflightMax, int(st.MostHeld))
		r.InstancePeakMiB = append(r.InstancePeakMiB, float64(st.PeakRSS)/(1<<20))
		r.InstancePeakHeapMiB = append(r.InstancePeakHeapMiB, float64(st.PeakHeap)/(1<<20))
		most = max(most, int(st.MostHeld))
		refused += st.Refused
	}
	r.InflightMax, r.Refused = ptr(most), ptr(refused)
}

// measureParents derives parent writes and rollup lag from the observer.
func (e *env) measureParents(r *report.Mode, coll string, ids []string, res loadResult, settled time.Time) {
	if r.Mode == report.ModeRaw {
		return
	}
	f := parentFigures{start: res.Start, exactAt: res.End, gap: -1,
		seconds: int(settled.Sub(res.Start)/time.Second) + 1,
		steps:   int(settled.Sub(res.Start)/(100*time.Millisecond)) + 1}
	r.ParentSeries = make([]int, f.seconds)
	r.LagSeries = make([]float64, f.steps)
	ackTimes := make([][]time.Time, len(ids))
	for _, a := range res.Acks {
		ackTimes[a.Counter] = append(ackTimes[a.Counter], a.At)
	}
	fields := max(e.fieldsOf(r.Mode), 1)
	for i, id := range ids {
		writes := e.obs.of(observed(coll, id), res.Start)
		slices.SortFunc(ackTimes[i], time.Time.Compare)
		var doc []write // the document's writes, taken with its first count
		if i%fields == 0 {
			// A fold writes every count of the document at once, seen once
			// for each; an increment (plain's, or one tally wrote into the
			// document itself) one of them.
			doc = slices.Clone(writes)
			for _, other := range ids[i+1 : i+fields] {
				doc = append(doc, e.obs.of(observed(coll, other), res.Start)...)
			}
			slices.SortFunc(doc, func(a, b write) int { return a.At.Compare(b.At) })
			doc = slices.CompactFunc(doc, func(a, b write) bool { return a.At.Equal(b.At) })
		}
		f.add(r, writes, doc, ackTimes[i], res.End)
	}
	f.set(r, res.End)
}

// parentFigures gathers the parents' writes, counter by counter.
type parentFigures struct {
	start, exactAt                 time.Time
	seconds, steps                 int
	gap                            time.Duration // closest two writes of one parent; -1: none yet
	lags                           []time.Duration
	during, total, peak, unreached int
}

// add takes one counter's writes and its acknowledged increments' times
// (sorted), and, with the first count of its document, the document's
// writes (doc, in order; nil with any other count), so that each is
// counted once: a fold writes all of a document's counts at once, a plain
// increment one of them.
func (f *parentFigures) add(r *report.Mode, writes, doc []write, acks []time.Time, end time.Time) {
	var times []time.Time
	for _, w := range doc {
		times = append(times, w.At)
		if !w.At.After(end) {
			f.during++
		}
	}
	f.total += len(doc)
	for s, n := range perSecond(times, f.start, f.seconds) {
		r.ParentSeries[s] += n
		f.peak = max(f.peak, n)
	}
	for k := 1; k < len(doc); k++ {
		if d := doc[k].At.Sub(doc[k-1].At); f.gap < 0 || d < f.gap {
			f.gap = d
		}
	}
	l, u := lags(acks, writes)
	f.lags = append(f.lags, l...)
	f.unreached += u
	if n := len(writes); n == 0 && len(acks) > 0 || n > 0 && writes[n-1].Total != int64(len(acks)) {
		f.exactAt = time.Time{}
	} else if n > 0 && f.exactAt != (time.Time{}) && writes[n-1].At.After(f.exactAt) {
		f.exactAt = writes[n-1].At
	}
	if len(acks) == 0 && len(writes) == 0 {
		return
	}
	for k := range f.steps {
		t := f.start.Add(time.Duration(k) * 100 * time.Millisecond)
		r.LagSeries[k] += float64(int64(countUpTo(acks, t)) - totalAt(writes, t))
	}
}

// set writes the figures into r, the load having ended at end.
func (f *parentFigures) set(r *report.Mode, end time.Time) {
	peakAll := 0
	for _, n := range r.ParentSeries {
		peakAll = max(peakAll, n)
	}
	r.ParentPerS = ptr(float64(f.during) / r.Seconds)
	r.ParentPerI = ptr(float64(f.total) / float64(r.Acked))
	r.ParentTotal, r.ParentPeak, r.ParentPeakAll = ptr(f.total), ptr(f.peak), ptr(peakAll)
	if f.gap >= 0 {
		r.ParentGap = ptr(ms(f.gap))
	}
	if !r.HasRollup {
		return
	}
	slices.Sort(f.lags)
	r.LagP50, r.LagP99 = ptr(ms(percentile(f.lags, .5))), ptr(ms(percentile(f.lags, .99)))
	r.Unreached = ptr(f.unreached)
	if f.exactAt != (time.Time{}) {
		r.SettleLag = ptr(ms(max(0, f.exactAt.Sub(end))))
	}
}
