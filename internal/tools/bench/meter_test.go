package bench

import (
	"testing"
	"time"
)

// TestMeterBillsStepsOnce: requests one after another, and held at once,
// are billed in 100 ms steps, each step once: never more than the time
// that passed (rounded up to a step), and at least a step.
func TestMeterBillsStepsOnce(t *testing.T) {
	var m meter
	start := time.Now()
	for range 200 {
		m.begin(10)
		m.begin(10) // held beside it
		m.end()
		m.end()
	}
	st := m.read()
	passed := time.Since(start)
	if st.Requests != 400 || st.Bytes != 4000 {
		t.Errorf("requests %d, bytes %d; want 400 and 4000", st.Requests, st.Bytes)
	}
	most := (passed/billingStep + 2) * billingStep // the steps the run touched
	if billed := time.Duration(st.BilledSeconds * float64(time.Second)); billed < billingStep || billed > most {
		t.Errorf("billed %v for %v of requests; want a step at least, and at most %v", billed, passed, most)
	}
	m.reset()
	if st := m.read(); st.Requests != 0 || st.BilledSeconds != 0 {
		t.Errorf("after reset: %+v", st)
	}
}
