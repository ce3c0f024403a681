package increment

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/tallycounters/tally/core"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
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

// BenchmarkLimitCost measures, in one run, a public step by a signed-in
// user with the limits on and off: its time, and the Firestore reads,
// writes and transactions it costs.
func BenchmarkLimitCost(b *testing.B) {
	for _, tc := range []struct {
		name   string
		limits Limits
	}{{"off", Limits{}}, {"on", Limits{Counter: Rate{1_000_000, time.Second}, User: Rate{1_000_000, time.Second}}}} {
		b.Run(tc.name, func(b *testing.B) {
			h, c, ops, host := signedIn(b, Config{Public: true, AutoCreate: true, Limits: tc.limits})
			u := user(b, host)
			id := emulatortest.ID(b)
			if _, err := core.Default().Counter(c, id).Set(context.Background(), map[string]any{core.FieldNumShards: 10}); err != nil {
				b.Fatal(err)
			}
			limitedIncrement(h, u.IDToken, id) // num_shards cached
			ops.Reset()
			for b.Loop() {
				if code, _ := limitedIncrement(h, u.IDToken, id); code != http.StatusOK {
					b.Fatalf("status %d", code)
				}
			}
			b.ReportMetric(float64(ops.Reads())/float64(b.N), "reads/op")
			b.ReportMetric(float64(ops.Writes())/float64(b.N), "writes/op")
			b.ReportMetric(float64(ops.Transactions())/float64(b.N), "transactions/op")
		})
	}
}
