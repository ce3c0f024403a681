package bytime

import (
	"strings"
	"testing"
	"time"
)

// TestUnreadBoundariesAreReported: a fold that closes a bucket whose start
// no one read, while the count changed since the last fold, says which
// start it could not read; one that read it, one with no change since,
// or one that found the count as the last fold left it at that start or
// later (Fold.Quiet), has nothing to say.
func TestUnreadBoundariesAreReported(t *testing.T) {
	w, err := Parse("views_m=views per minute")
	if err != nil {
		t.Fatal(err)
	}
	b0 := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	at := b0.Add(90 * time.Second) // in the next minute
	for _, c := range []struct {
		name   string
		totals []int64
		read   bool
		want   int
	}{
		{"changed, unread", []int64{13}, false, 1},
		{"changed, read", []int64{13}, true, 0},
		{"unchanged", []int64{10}, false, 0},
		{"changed, found as the last fold left it at a later start", []int64{13}, false, 0},
	} {
		f := Fold{Windows: []Window{w}, Counts: []string{"views"}, Zone: time.UTC,
			States: map[string]State{"views_m": {Bucket: b0, Base: 4, Series: map[string]int64{}}}, Totals: []int64{10},
			At: at, Values: c.totals}
		if strings.HasPrefix(c.name, "changed, found") {
			f.Quiet = b0.Add(time.Minute)
		}
		if c.read {
			f.Boundaries = []Boundary{{At: b0.Add(time.Minute), Values: []int64{11}}}
		}
		if _, _, _, unread := f.Move(c.totals); len(unread) != c.want {
			t.Errorf("%s: unread %v, want %d", c.name, unread, c.want)
		}
	}
}

// TestDue: the starts a fold reads first. A window new to the document
// reads its current bucket's start (unless the document was created
// since, or the start is past NewWindowLag); a known one each start
// crossed since next_boundary within BoundaryLag; never more than
// MaxBoundaryReads, never one twice.
func TestDue(t *testing.T) {
	minute, _ := Parse("views_m=views per minute")
	hour, _ := Parse("views_h=views per hour")
	b0 := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	known := map[string]State{"views_m": {Bucket: b0, Series: map[string]int64{}}, "views_h": {Bucket: b0, Series: map[string]int64{}}}
	for _, c := range []struct {
		name string
		f    Fold
		now  time.Time
		want []time.Time
	}{
		{"new windows", Fold{Windows: []Window{minute, hour}, At: b0.Add(90 * time.Second)}, b0.Add(90 * time.Second),
			[]time.Time{b0.Add(time.Minute), b0}},
		{"new windows of a document created since", Fold{Windows: []Window{minute}, At: b0.Add(90 * time.Second), Born: b0.Add(61 * time.Second)},
			b0.Add(90 * time.Second), nil},
		{"a new window's start past NewWindowLag", Fold{Windows: []Window{hour}, At: b0.Add(NewWindowLag + time.Minute)},
			b0.Add(NewWindowLag + time.Minute), nil},
		{"known windows, next_boundary crossed", Fold{Windows: []Window{minute, hour}, States: known, NextBoundary: b0.Add(time.Minute),
			At: b0.Add(3*time.Minute + time.Second)}, b0.Add(3*time.Minute + time.Second),
			[]time.Time{b0.Add(time.Minute), b0.Add(2 * time.Minute), b0.Add(3 * time.Minute)}},
		{"known windows, starts past BoundaryLag left out", Fold{Windows: []Window{minute}, States: known, NextBoundary: b0.Add(time.Minute),
			At: b0.Add(7 * time.Minute)}, b0.Add(7 * time.Minute),
			[]time.Time{b0.Add(2 * time.Minute), b0.Add(3 * time.Minute), b0.Add(4 * time.Minute), b0.Add(5 * time.Minute), b0.Add(6 * time.Minute), b0.Add(7 * time.Minute)}},
		{"at most MaxBoundaryReads", Fold{Windows: []Window{minute}, States: known, NextBoundary: b0.Add(time.Minute),
			At: b0.Add(30 * time.Minute)}, b0.Add(4 * time.Minute), // a clock behind the fold's: every start is within the lag
			[]time.Time{b0.Add(1 * time.Minute), b0.Add(2 * time.Minute), b0.Add(3 * time.Minute), b0.Add(4 * time.Minute), b0.Add(5 * time.Minute),
				b0.Add(6 * time.Minute), b0.Add(7 * time.Minute), b0.Add(8 * time.Minute), b0.Add(9 * time.Minute), b0.Add(10 * time.Minute)}},
	} {
		c.f.Zone = time.UTC
		if got := c.f.Due(c.now); !equalTimes(got, c.want) {
			t.Errorf("%s: Due = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestCrossedUnread: the starts a fold crosses and holds no read of,
// latest first, each once across windows.
func TestCrossedUnread(t *testing.T) {
	minute, _ := Parse("views_m=views per minute")
	two, _ := Parse("views_2=views per minute keep 2")
	b0 := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	f := Fold{Windows: []Window{minute, two}, Zone: time.UTC, At: b0.Add(3*time.Minute + time.Second),
		States:     map[string]State{"views_m": {Bucket: b0}, "views_2": {Bucket: b0.Add(time.Minute)}},
		Boundaries: []Boundary{{At: b0.Add(2 * time.Minute)}}}
	want := []time.Time{b0.Add(3 * time.Minute), b0.Add(time.Minute)}
	if got := f.CrossedUnread(); !equalTimes(got, want) {
		t.Errorf("CrossedUnread = %v, want %v", got, want)
	}
}

func equalTimes(a, b []time.Time) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !a[i].Equal(b[i]) {
			return false
		}
	}
	return true
}

// TestTrendDelta: a trend's change at a fold is each term's change,
// weighted: a count's since the last fold, an aggregate's since its last
// value, if this fold refolded it.
func TestTrendDelta(t *testing.T) {
	w, err := Parse("hot=trend(likes + 2*comments + 0.5*score, 1h)")
	if err != nil {
		t.Fatal(err)
	}
	f := Fold{Windows: []Window{w}, Counts: []string{"likes", "views"}, Totals: []int64{10, 100}}
	before := map[string]any{"comments": int64(3), "score": 4.0}
	for _, c := range []struct {
		name   string
		totals []int64
		after  map[string]any
		want   float64
	}{
		{"a count", []int64{13, 500}, nil, 3},
		{"aggregates refolded", []int64{10, 100}, map[string]any{"comments": int64(5), "score": 6.0}, 2*2 + 0.5*2},
		{"both", []int64{11, 100}, map[string]any{"comments": int64(2)}, 1 - 2},
		{"an average over no children", []int64{10, 100}, map[string]any{"score": nil}, 0.5 * -4},
	} {
		if got := f.TrendDelta(w, c.totals, before, c.after); got != c.want {
			t.Errorf("%s: TrendDelta = %v, want %v", c.name, got, c.want)
		}
	}
}
