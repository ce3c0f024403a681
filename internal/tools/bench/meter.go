package bench

import (
	"net/http"
	"sync"
	"time"
)

// billingStep is what Cloud Run rounds an instance's billable time up to.
const billingStep = 100 * time.Millisecond

// meter measures what Cloud Run's request-based billing charges one
// function instance for: its requests, and its billable time, which runs
// while it holds at least one request (so requests held at once share
// it), counted in 100 ms steps: each step of the meter's clock in which it
// held a request is billed whole, and none twice, so an instance is never
// billed more than the time that passes; and the bytes of the requests'
// bodies, which event delivery through Pub/Sub is billed by.
type meter struct {
	mu       sync.Mutex
	origin   time.Time // step 0 begins here
	inflight int
	since    time.Time // when the stretch now open began
	steps    int64     // billed
	last     int64     // the last step billed; -1: none
	requests int64
	bytes    int64
}

// meterStats is what a meter measured since it was reset.
type meterStats struct {
	Requests      int64   `json:"requests"`
	BilledSeconds float64 `json:"billed_seconds"` // billable instance time
	Bytes         int64   `json:"bytes"`          // of the requests' bodies
}

// wrap counts h's requests on m.
func (m *meter) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.begin(max(r.ContentLength, 0))
		defer m.end()
		h.ServeHTTP(w, r)
	})
}

func (m *meter) begin(bytes int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.origin.IsZero() {
		m.origin, m.last = time.Now(), -1
	}
	m.requests++
	m.bytes += bytes
	if m.inflight == 0 {
		m.since = time.Now()
	}
	m.inflight++
}

func (m *meter) end() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.inflight--
	if m.inflight == 0 {
		m.steps += m.bill(m.since, time.Now())
	}
}

// bill marks the steps from a to b billed, and returns how many were not
// before. m.mu is held.
func (m *meter) bill(a, b time.Time) int64 {
	first, last := int64(a.Sub(m.origin)/billingStep), int64(b.Sub(m.origin)/billingStep)
	first = max(first, m.last+1)
	if last < first {
		return 0
	}
	m.last = last
	return last - first + 1
}

// read returns what m measured since it was reset; a stretch still
// open counts up to now.
func (m *meter) read() meterStats {
	m.mu.Lock()
	defer m.mu.Unlock()
	steps, last := m.steps, m.last
	if m.inflight > 0 {
		steps += m.bill(m.since, time.Now())
		m.last = last // counted again at the stretch's end
	}
	return meterStats{Requests: m.requests, BilledSeconds: (time.Duration(steps) * billingStep).Seconds(), Bytes: m.bytes}
}

// reset starts m again: a stretch still open counts from now.
func (m *meter) reset() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.requests, m.steps, m.bytes, m.since = 0, 0, 0, time.Now()
}
