package bench

import (
	"slices"
	"sort"
	"time"

	"github.com/tallycounters/tally/internal/tools/bench/report"
	"github.com/tallycounters/tally/internal/tools/opcount"
)

// figures sets mode r's figures from what it measured over took: the
// documents' writes, the clients' views against the truth, the
// operations and the bill.
func (e *extEnv) figures(r *report.ExtensionMode, m string, docs []string, clients []*extClient, took time.Duration) {
	e.mu.Lock()
	for _, d := range docs {
		w := e.writes[d]
		r.ParentMostInSecond = max(r.ParentMostInSecond, mostInASecond(w))
		r.ParentWritesPerSec += float64(len(w)) / took.Seconds() / float64(len(docs))
		r.WorkerWrites += e.byWorker[d]
	}
	e.mu.Unlock()
	views(r, m, clients)
	acked := float64(r.Acked)
	var reads, writes, deletes, failed int64
	for _, o := range []*opcount.Ops{&e.ops.load, &e.ops.rollup, &e.ops.worker} {
		reads, writes, deletes, failed = reads+o.Reads(), writes+o.Writes(), deletes+o.Deletes(), failed+o.Failed()
	}
	r.ReadsPerIncr, r.WritesPerIncr, r.DeletesPerIncr = float64(reads)/acked, float64(writes)/acked, float64(deletes)/acked
	var changes int64
	for _, c := range clients {
		changes += c.changes.Load()
	}
	r.ListenerReadsPerIncr = float64(changes) / acked
	b := &r.Bill
	inc := e.incr.read()
	b.IncrementRequests, b.IncrementSeconds = float64(inc.Requests)/acked, 1000*inc.BilledSeconds/acked
	var events, bytes float64
	for _, mt := range e.rollups {
		st := mt.read()
		events, bytes = events+float64(st.Requests), bytes+float64(st.Bytes)
		b.RollupSeconds += 1000 * st.BilledSeconds / acked
	}
	b.RollupRequests = events / acked
	if events > 0 {
		b.EventBytes = bytes / events
	}
	b.Price(e.o.Functions, e.o.Prices.PerMillion(r.ReadsPerIncr, r.WritesPerIncr-r.DeletesPerIncr+float64(failed)/acked, r.DeletesPerIncr))
}

// mostInASecond is the most of the times ts within any one second.
func mostInASecond(ts []time.Time) int {
	ts = slices.Clone(ts)
	slices.SortFunc(ts, func(a, b time.Time) int { return a.Compare(b) })
	most := 0
	for i, j := 0, 0; j < len(ts); j++ {
		for ts[j].Sub(ts[i]) >= time.Second {
			i++
		}
		most = max(most, j-i+1)
	}
	return most
}

// views compares each client's views with the truth at their read times:
// the increments of its document committed by then.
func views(r *report.ExtensionMode, m string, clients []*extClient) {
	commits := map[string][]time.Time{}
	for _, c := range clients {
		commits[c.doc] = append(commits[c.doc], c.commits...)
	}
	for _, ts := range commits {
		slices.SortFunc(ts, func(a, b time.Time) int { return a.Compare(b) })
	}
	var stale []time.Duration
	var below int64
	for _, c := range clients {
		all := commits[c.doc]
		prev := int64(-1)
		for _, s := range c.seen {
			v := s.likes + s.mine
			if m == report.ModeTally {
				v = s.likes + ownSince(c.commits, s.asOf, s.at) // the web client's: its own since as_of
			}
			truth := int64(sort.Search(len(all), func(i int) bool { return all[i].After(s.at) }))
			r.Views++
			switch {
			case v > truth:
				r.Above++
				r.MaxAbove = max(r.MaxAbove, v-truth)
			case v < truth:
				r.Below++
				below += truth - v
				r.MaxBelow = max(r.MaxBelow, truth-v)
				stale = append(stale, s.at.Sub(all[max(v, 0)]))
			default:
				stale = append(stale, 0)
			}
			if prev >= 0 && v < prev {
				r.Dips++
				r.MaxDip = max(r.MaxDip, prev-v)
			}
			prev = v
		}
	}
	if r.Below > 0 {
		r.MeanBelow = float64(below) / float64(r.Below)
	}
	slices.Sort(stale)
	r.StaleP50, r.StaleP99 = ms(percentile(stale, .5)), ms(percentile(stale, .99))
}

// ownSince is how many of a client's commits are after asOf and at or
// before at: those its view adds to a count as of asOf.
func ownSince(commits []time.Time, asOf, at time.Time) int64 {
	n := int64(0)
	for _, c := range commits {
		if c.After(asOf) && !c.After(at) {
			n++
		}
	}
	return n
}
