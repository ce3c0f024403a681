package bytime

import (
	"math"
	"testing"
	"time"

	"github.com/tallycounters/tally/internal/core/calendar"
)

// TestRoll: a window moved on several buckets gets each closed one's
// count, 0 included, and keeps only the buckets it keeps.
func TestRoll(t *testing.T) {
	b0 := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	w := Window{Field: "v", Kind: KindPer, Count: "views", Unit: calendar.Minute, N: 4}
	st := State{Bucket: b0, Base: 10, Series: map[string]int64{calendar.BucketKey(b0.Add(-time.Minute)): 4}}
	values := map[time.Time]int64{b0.Add(time.Minute): 15, b0.Add(2 * time.Minute): 15, b0.Add(3 * time.Minute): 21, b0.Add(4 * time.Minute): 22}
	st.Roll(w, b0.Add(4*time.Minute), time.UTC, func(b time.Time) int64 { return values[b] })
	want := map[string]int64{calendar.BucketKey(b0): 5, calendar.BucketKey(b0.Add(time.Minute)): 0, calendar.BucketKey(b0.Add(2 * time.Minute)): 6, calendar.BucketKey(b0.Add(3 * time.Minute)): 1}
	if st.Bucket != b0.Add(4*time.Minute) || st.Base != 22 || len(st.Series) != len(want) {
		t.Fatalf("rolled = %+v; want the bucket of 10:04, base 22, series %v", st, want)
	}
	for k, v := range want {
		if st.Series[k] != v {
			t.Errorf("series[%s] = %d, want %d", k, st.Series[k], v)
		}
	}
	// A window idle a year moves on at once, keeping its last 4 buckets,
	// each of count 0.
	later := b0.AddDate(1, 0, 0)
	st.Roll(w, later, time.UTC, func(time.Time) int64 { return 22 })
	if st.Bucket != later || st.Base != 22 || len(st.Series) != 4 {
		t.Fatalf("after a year idle: %+v", st)
	}
	for k := range 4 {
		if n, ok := st.Series[calendar.BucketKey(later.Add(-time.Duration(k+1)*time.Minute))]; !ok || n != 0 {
			t.Errorf("after a year idle: %+v", st)
		}
	}
}

// TestTrend: a trend's field orders by its score at any moment, its score
// is the decayed sum of its units, a take-back subtracts, and nothing
// overflows however far from the landmark.
func TestTrend(t *testing.T) {
	h := 6 * time.Hour
	t0 := Landmark.Add(1000 * 24 * time.Hour)
	S := math.Inf(-1)
	S = TrendAdd(S, 3, t0, h)
	S = TrendAdd(S, 2, t0.Add(h), h)
	if got, want := TrendNow(S, t0.Add(2*h), h), 3*0.25+2*0.5; math.Abs(got-want) > 1e-9 {
		t.Errorf("score = %g, want %g", got, want)
	}
	S = TrendAdd(S, -1, t0.Add(2*h), h)
	if got, want := TrendNow(S, t0.Add(2*h), h), 3*0.25+2*0.5-1; math.Abs(got-want) > 1e-9 {
		t.Errorf("after a take-back: %g, want %g", got, want)
	}
	if S = TrendAdd(S, -10, t0.Add(2*h), h); !math.IsInf(S, -1) || TrendNow(S, t0, h) != 0 {
		t.Errorf("more taken back than given: %g", S)
	}
	// An old burst against a new trickle: the field orders as the scores do.
	old := TrendAdd(math.Inf(-1), 100, t0, h)
	fresh := TrendAdd(math.Inf(-1), 10, t0.Add(4*h), h)
	if !(fresh > old) || !(TrendNow(fresh, t0.Add(5*h), h) > TrendNow(old, t0.Add(5*h), h)) {
		t.Errorf("old %g (%g), fresh %g (%g)", old, TrendNow(old, t0.Add(5*h), h), fresh, TrendNow(fresh, t0.Add(5*h), h))
	}
	far := TrendAdd(math.Inf(-1), 1, Landmark.AddDate(100, 0, 0), 30*time.Minute)
	if math.IsInf(far, 0) || math.IsNaN(far) || TrendNow(far, Landmark.AddDate(100, 0, 0), 30*time.Minute) != 1 {
		t.Errorf("a century on: %g", far)
	}
}
