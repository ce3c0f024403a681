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
	now    map[string]int64   // by document path: the total after its latest write seen
	last   map[string]time.Time
	delays []time.Duration // commit to delivery, of shard events
}

func newObserver() *observer {
	return &observer{writes: map[string][]write{}, deltas: map[string][]write{}, now: map[string]int64{}, last: map[string]time.Time{}}
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
	if at.After(o.last[path]) {
		o.now[path], o.last[path] = total, at
	}
}

// added records a server-side increment of path by delta, committed at at,
// for writers that know their commit time and need no event to report it.
func (o *observer) added(path string, at time.Time, delta int64) {
	o.mu.Lock()
	o.deltas[path] = append(o.deltas[path], write{At: at, Total: delta})
	o.now[path] += delta
	o.mu.Unlock()
}

// total is path's total after the latest write seen to it; 0 before any.
func (o *observer) total(path string) int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.now[path]
}

// of returns the writes to path at or after since, in commit order.
func (o *observer) of(path string, since time.Time) []write {
	o.mu.Lock()
	all := append([]write(nil), o.writes[path]...)
	deltas := append([]write(nil), o.deltas[path]...)
	o.mu.Unlock()
	sort.Slice(all, func(i, j int) bool { return all[i].At.Before(all[j].At) })
	if len(deltas) > 0 {
		// Increments commit one after another: each total is the sum so far.
		sort.Slice(deltas, func(i, j int) bool { return deltas[i].At.Before(deltas[j].At) })
		var sum int64
		for i := range deltas {
			sum += deltas[i].Total
			deltas[i].Total = sum
		}
		all = deltas
	}
	i := sort.Search(len(all), func(i int) bool { return !all[i].At.Before(since) })
	return all[i:]
}
