package bench

import (
	"fmt"

	"github.com/tallycounters/tally/internal/tools/bench/report"
)

// meter is the in-process function name's meter (see meter), made on
// first use.
func (e *env) meter(name string) *meter {
	if e.meters == nil {
		e.meters = map[string]*meter{}
	}
	if e.meters[name] == nil {
		e.meters[name] = &meter{}
	}
	return e.meters[name]
}

// billFigures prices mode m's whole bill (report.Bill) from what its
// functions took since the mode began, its events' redeliveries and the
// settling after the load included: Increment's requests and billable
// time, measured where it serves (this process); Rollup's, measured by
// tally's instances (with the CPU time their processes used) or, for the
// naive rollup, here; and Firestore's operations, priced before. The raw
// and plain modes run no function: their bill is Firestore's.
func (e *env) billFigures(r *report.Mode, m string) error {
	b := &r.Bill
	per := func(n float64) float64 { return n / float64(r.Acked) }
	var events, bytes float64
	if m == report.ModeTally || m == report.ModeNaive {
		for i := range e.o.IncrementInstances {
			inc := e.meter(fmt.Sprintf("%s/Increment/%d", m, i)).read()
			b.IncrementRequests += per(float64(inc.Requests))
			b.IncrementSeconds += 1000 * per(inc.BilledSeconds)
		}
		if m == report.ModeTally && e.incPool != nil {
			if err := e.poolBill(b, per); err != nil {
				return err
			}
		}
		if e.o.IncrementBilling == report.BillingInstance {
			// Every instance lives the whole load, billed all along.
			b.IncrementBilling = report.BillingInstance
			b.IncrementSeconds = 1000 * per(r.Seconds*float64(e.o.IncrementInstances))
		}
	}
	switch m {
	case report.ModeTally:
		stats, err := e.instanceStats()
		if err != nil {
			return err
		}
		var seconds, cpu float64
		for _, st := range stats {
			events, bytes = events+float64(st.Bill.Requests), bytes+float64(st.Bill.Bytes)
			seconds, cpu = seconds+st.Bill.BilledSeconds, cpu+st.CPUSeconds
		}
		b.RollupSeconds, b.RollupCPUSeconds = 1000*per(seconds), ptr(1000*per(cpu))
	case report.ModeNaive:
		roll := e.meter(m + "/Rollup").read()
		events, bytes = float64(roll.Requests), float64(roll.Bytes)
		b.RollupSeconds = 1000 * per(roll.BilledSeconds)
	}
	b.RollupRequests = per(events)
	if events > 0 {
		b.EventBytes = bytes / events
	}
	b.Price(e.o.Functions, r.PerMillion)
	return nil
}

// poolBill sets b's Increment figures from tally's Increment instances of
// less than one vCPU: their requests and billable time, each instance
// alone; the CPU time they used; and how long the CPU controller held them
// back for their share.
func (e *env) poolBill(b *report.Bill, per func(float64) float64) error {
	stats, err := e.incPool.stats()
	if err != nil {
		return err
	}
	var requests, seconds, cpu float64
	for _, st := range stats {
		requests, seconds, cpu = requests+float64(st.Bill.Requests), seconds+st.Bill.BilledSeconds, cpu+st.CPUSeconds
	}
	b.IncrementVCPU = e.o.IncrementCPU
	b.IncrementRequests, b.IncrementSeconds, b.IncrementCPUSeconds = per(requests), 1000*per(seconds), ptr(1000*per(cpu))
	if t, ok := e.incPool.throttled(); ok {
		b.IncrementThrottledSeconds = ptr(1000 * per((t - e.incPool.throttledAt).Seconds()))
	}
	return nil
}
