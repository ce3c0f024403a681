package bench

import (
	"sort"
	"sync"
	"time"

	"github.com/googleapis/google-cloudevents-go/cloud/firestoredata"
	"google.golang.org/protobuf/proto"
)

// write is one committed write to a counter's parent document.
type write struct {
	At    time.Time // the document's update_time
	Total int64
}

// observer records every write to the parent documents: tally's folds, as
// the Rollup instances report them from their commits' results, and the
// baselines' increments, from the commit times their writers report. None
// of them costs the emulator an event to deliver, and polling would miss
// writes.
type observer struct {
	mu     sync.Mutex
	writes map[string][]write // by document path
	deltas map[string][]write // by document path; Total holds the write's increment
	delays []time.Duration    // commit to delivery, of shard events
}

func newObserver() *observer {
	return &observer{writes: map[string][]write{}, deltas: map[string][]write{}}
}

// delivered records how long after its commit a shard event reached the
// bridge: the emulator's own delivery delay.
func (o *observer) delivered(body []byte, at time.Time) {
	var data firestoredata.DocumentEventData
	if proto.Unmarshal(body, &data) != nil || data.GetValue() == nil {
		return
	}
	o.mu.Lock()
	o.delays = append(o.delays, at.Sub(data.GetValue().GetUpdateTime().AsTime()))
	o.mu.Unlock()
}

// takeDelays returns the delays recorded since the last call.
func (o *observer) takeDelays() []time.Duration {
	o.mu.Lock()
	defer o.mu.Unlock()
	d := o.delays
	o.delays = nil
	return d
}

// wrote records a write that set path's total to total, committed at at.
func (o *observer) wrote(path string, at time.Time, total int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.writes[path] = append(o.writes[path], write{At: at, Total: total})
}

// added records a server-side increment of path by delta, committed at at,
// for writers that know their commit time and need no event to report it.
func (o *observer) added(path string, at time.Time, delta int64) {
	o.mu.Lock()
	o.deltas[path] = append(o.deltas[path], write{At: at, Total: delta})
	o.mu.Unlock()
}

// total is path's total after the latest write seen to it; 0 before any.
func (o *observer) total(path string) int64 {
	all := o.of(path, time.Time{})
	if len(all) == 0 {
		return 0
	}
	return all[len(all)-1].Total
}

// of returns the writes to path at or after since, in commit order, each
// with the total after it: a fold's, which holds every increment written
// to the document before it; an increment's (a baseline's, or one tally
// wrote into the document itself), the total before it and its amount.
func (o *observer) of(path string, since time.Time) []write {
	o.mu.Lock()
	folds := append([]write(nil), o.writes[path]...)
	deltas := append([]write(nil), o.deltas[path]...)
	o.mu.Unlock()
	type event struct {
		write
		delta bool
	}
	all := make([]event, 0, len(folds)+len(deltas))
	for _, w := range folds {
		all = append(all, event{write: w})
	}
	for _, w := range deltas {
		all = append(all, event{write: w, delta: true})
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].At.Before(all[j].At) })
	out := make([]write, len(all))
	var total int64
	for i, e := range all {
		if e.delta {
			total += e.Total
		} else {
			total = e.Total
		}
		out[i] = write{At: e.At, Total: total}
	}
	i := sort.Search(len(out), func(i int) bool { return !out[i].At.Before(since) })
	return out[i:]
}
