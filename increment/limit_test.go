package increment

import (
	"net/http"
	"testing"
	"time"
)

func TestParseRate(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Rate
		bad  bool
	}{
		{in: "10/m", want: Rate{10, time.Minute}},
		{in: "1/s", want: Rate{1, time.Second}},
		{in: "500/h", want: Rate{500, time.Hour}},
		{in: "off"},
		{in: "0/m", bad: true},
		{in: "10", bad: true},
		{in: "10/d", bad: true},
		{in: "-1/s", bad: true},
		{in: "ten/m", bad: true},
		{in: "", bad: true},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseRate(tc.in)
			if tc.bad != (err != nil) || got != tc.want {
				t.Fatalf("ParseRate(%q) = %v, %v; want %v, error %v", tc.in, got, err, tc.want, tc.bad)
			}
			if !tc.bad && got.String() != tc.in {
				t.Errorf("%v.String() = %q, want %q", got, got.String(), tc.in)
			}
		})
	}
}

// TestRateAdmits: 3 a minute admits 3 at once, then one every 20 s, and
// says how long to wait for the next.
func TestRateAdmits(t *testing.T) {
	r := Rate{3, time.Minute}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var tat time.Time
	for i := range 3 {
		var wait time.Duration
		if tat, wait = r.admit(tat, t0); wait != 0 {
			t.Fatalf("increment %d at once refused, wait %v", i+1, wait)
		}
	}
	if _, wait := r.admit(tat, t0); wait != 20*time.Second {
		t.Errorf("the 4th at once: wait %v, want 20s", wait)
	}
	if _, wait := r.admit(tat, t0.Add(20*time.Second)); wait != 0 {
		t.Errorf("the 4th 20 s later: wait %v, want none", wait)
	}
	if next, wait := (Rate{}).admit(tat, t0); wait != 0 || !next.Equal(tat) {
		t.Errorf("no limit: %v, %v", next, wait)
	}
}

// limitedIncrement posts a step of 1 to counter id as the user with the
// token, and returns the status and Retry-After.
func limitedIncrement(h http.Handler, token, id string) (int, string) {
	w := serveRequest(h, httptestRequest("/", `{"counter":"`+id+`"}`, "application/json", token))
	return w.Code, w.Header().Get("Retry-After")
}
