package bench

import (
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/googleapis/google-cloudevents-go/cloud/firestoredata"
	"google.golang.org/protobuf/proto"

	"github.com/tallycounters/tally/internal/bridge"
)

// write is one committed write to a counter's parent document, as the
// emulator reported it.
type write struct {
	At    time.Time // the document's update_time
	Total int64
}

// observer records every write to the parent documents: from Firestore's own
// events for the documents written in transactions (tally's parents), one
// event per commit, and from the commit times writers report for plain
// increments (the baselines), so that their parents add no events to the
// emulator's load. Polling would miss writes.
type observer struct {
	field string // the total field

	mu     sync.Mutex
	writes map[string][]write // by document path
	deltas map[string][]write // by document path; Total holds the write's increment
	delays []time.Duration    // commit to delivery, of shard events
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

func newObserver(field string) *observer {
	return &observer{field: field, writes: map[string][]write{}, deltas: map[string][]write{}}
}

func (o *observer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	w.WriteHeader(http.StatusNoContent)
	body := bridge.DecodeBody(raw)
	var data firestoredata.DocumentEventData
	if proto.Unmarshal(body, &data) != nil || data.GetValue() == nil {
		return
	}
	doc := data.GetValue()
	name := doc.GetName()
	path := name[strings.Index(name, "/documents/")+len("/documents/"):]
	total := doc.GetFields()[o.field].GetIntegerValue()
	o.mu.Lock()
	o.writes[path] = append(o.writes[path], write{At: doc.GetUpdateTime().AsTime(), Total: total})
	o.mu.Unlock()
}

// added records a server-side increment of path by delta, committed at at,
// for writers that know their commit time and need no event to report it.
func (o *observer) added(path string, at time.Time, delta int64) {
	o.mu.Lock()
	o.deltas[path] = append(o.deltas[path], write{At: at, Total: delta})
	o.mu.Unlock()
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
