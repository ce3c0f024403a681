package core

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/tallycounters/tally/core/calendar"
)

// TestParseWindows: every form of window reads back as written, and a
// mistake names the bad part.
func TestParseWindows(t *testing.T) {
	docs, err := ParseCounts("posts:likes,views,comments=count(comments),views_today=views per day,views_h=views per hour keep 12," +
		"views_7d=views over 7 days,hot=trend(likes + views/10 + 2*comments, 6h),slow=trend(likes, 2d)")
	if err != nil {
		t.Fatal(err)
	}
	if again, err := ParseCounts(FormatCounts(docs)); err != nil || FormatCounts(again) != FormatCounts(docs) {
		t.Errorf("FormatCounts does not read back: %q, %v", FormatCounts(docs), err)
	}
	ws := docs[0].Windows
	if len(ws) != 5 || ws[0].String() != "views_today=views per day" || ws[0].N != 30 ||
		ws[1].N != 12 || ws[2].Kind != KindOver || ws[2].N != 7 || ws[4].HalfLife != 48*time.Hour {
		t.Errorf("windows = %+v", ws)
	}
	if hot := ws[3]; len(hot.Terms) != 3 || hot.Terms[1] != (Term{"views", 0.1}) || hot.Terms[2] != (Term{"comments", 2}) {
		t.Errorf("hot = %+v", hot)
	}
	for spec, want := range map[string]string{
		"posts:views,v=views per fortnight":                "want minute, hour, day, week or month",
		"posts:views,v=views per day keep 0":               "keep 1 to 400",
		"posts:views,v=views over 0 days":                  "over 1 to 400",
		"posts:views,v=shares per day":                     "shares is not a count of posts",
		"posts:c=count(comments),v=c per day":              "is an aggregate, which is kept in total only",
		"posts:views,v=trend(views, 10s)":                  "a duration of a minute to ten years",
		"posts:views,v=trend(views, 213504d)":              "a duration of a minute to ten years", // was 25m26.29s, wrapped around
		"posts:views,v=trend(views, 3651d)":                "a duration of a minute to ten years",
		"posts:views,v=trend(views, 522w)":                 "a duration of a minute to ten years",
		"posts:views,v=trend(views, 9223372036854775807d)": "a duration of a minute to ten years",
		"posts:views,v=trend(views, 100000h)":              "a duration of a minute to ten years",
		"posts:views,v=trend(views, 3650d)":                "",
		"posts:views,v=trend(views, 0d)":                   "a duration of a minute to ten years",
		"posts:views,v=trend(views - 1, 6h)":               "is not count, K*count or count/K",
		"posts:views,views=views per day":                  "given twice",
		"counters:today=total per day;posts:likes":         "",
	} {
		_, err := ParseCounts(spec)
		switch {
		case want == "" && err != nil:
			t.Errorf("ParseCounts(%q) = %v", spec, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("ParseCounts(%q) = %v; want it to say %s", spec, err, want)
		}
	}
}

// TestWindowsWithinADocument: windows whose series could pass a quarter
// of Firestore's 1 MiB a document are refused, with what they would take;
// as many as fit are taken.
func TestWindowsWithinADocument(t *testing.T) {
	many := func(n int) string {
		ws := []string{"posts:views"}
		for i := range n {
			ws = append(ws, fmt.Sprintf("v%d=views per minute keep 400", i))
		}
		return strings.Join(ws, ",")
	}
	_, err := ParseCounts(many(150))
	if err == nil || !strings.Contains(err.Error(), "its windows could take 17") || !strings.Contains(err.Error(), "within 262144 bytes") {
		t.Errorf("150 windows of 400 minutes: %v; want what they take (about 1.7 MB) and the budget", err)
	}
	w := Window{Field: "v0", Kind: KindPer, Count: "views", Unit: calendar.Minute, N: 400}
	fit := MaxWindowBytes / w.Bytes()
	if _, err := ParseCounts(many(fit)); err != nil {
		t.Errorf("%d windows of 400 minutes, %d bytes each: %v", fit, w.Bytes(), err)
	}
	if _, err := ParseCounts(many(fit + 1)); err == nil {
		t.Errorf("%d windows of 400 minutes, %d bytes each: taken", fit+1, w.Bytes())
	}
}

// TestBuckets: a bucket starts at its calendar start in the zone, across
// changes of the clocks too, and each next bucket starts where the last
// ends.
func TestBuckets(t *testing.T) {
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 3, 29, 2, 30, 0, 0, time.UTC) // 04:30 in Paris, the day its clocks went forward
	for _, c := range []struct {
		u    calendar.Unit
		want string
	}{
		{calendar.Minute, "2026-03-29T04:30:00+02:00"},
		{calendar.Hour, "2026-03-29T04:00:00+02:00"},
		{calendar.Day, "2026-03-29T00:00:00+01:00"},
		{calendar.Week, "2026-03-23T00:00:00+01:00"},
		{calendar.Month, "2026-03-01T00:00:00+01:00"},
	} {
		if got := c.u.Start(at, paris).Format(time.RFC3339); got != c.want {
			t.Errorf("%s.Start = %s, want %s", c.u, got, c.want)
		}
	}
	if got := calendar.Day.Next(calendar.Day.Start(at, paris), paris); got.Sub(calendar.Day.Start(at, paris)) != 23*time.Hour {
		t.Errorf("the day the clocks went forward lasts %v", got.Sub(calendar.Day.Start(at, paris)))
	}
	for _, u := range []calendar.Unit{calendar.Minute, calendar.Hour, calendar.Day, calendar.Week, calendar.Month} {
		b := u.Start(time.Date(2026, 10, 25, 0, 0, 0, 0, time.UTC), paris) // the day they went back
		for range 30 {
			n := u.Next(b, paris)
			if !n.After(b) || u.Start(n, paris) != n || u.Prev(n, paris) != b {
				t.Fatalf("%s: after %s comes %s", u, b, n)
			}
			b = n
		}
	}
}

// TestRoll: a window moved on several buckets gets each closed one's
// count, 0 included, and keeps only the buckets it keeps.
func TestRoll(t *testing.T) {
	b0 := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	w := Window{Field: "v", Kind: KindPer, Count: "views", Unit: calendar.Minute, N: 4}
	st := WindowState{Bucket: b0, Base: 10, Series: map[string]int64{calendar.BucketKey(b0.Add(-time.Minute)): 4}}
	values := map[time.Time]int64{b0.Add(time.Minute): 15, b0.Add(2 * time.Minute): 15, b0.Add(3 * time.Minute): 21, b0.Add(4 * time.Minute): 22}
	st.roll(w, b0.Add(4*time.Minute), time.UTC, func(b time.Time) int64 { return values[b] })
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
	st.roll(w, later, time.UTC, func(time.Time) int64 { return 22 })
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

// TestUnreadBoundariesAreReported: a fold that closes a bucket whose start
// no one read, while the count changed since the last fold, says which
// start it could not read; one that read it, one with no change since,
// or one that found the count as the last fold left it at that start or
// later (Sum.Quiet), has nothing to say.
func TestUnreadBoundariesAreReported(t *testing.T) {
	l := Default()
	var err error
	if l.Docs, err = ParseCounts("posts:views,views_m=views per minute"); err != nil {
		t.Fatal(err)
	}
	f := NewFolder(nil, l, time.Second)
	b0 := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	p := Parent{Exists: true, Totals: []int64{10}, Windows: map[string]WindowState{"views_m": {Bucket: b0, Base: 4, Series: map[string]int64{}}}}
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
		s := Sum{At: at, Values: c.totals}
		if strings.HasPrefix(c.name, "changed, found") {
			s.Quiet = b0.Add(time.Minute)
		}
		if c.read {
			s.Boundaries = []Boundary{{At: b0.Add(time.Minute), Values: []int64{11}}}
		}
		if _, _, _, unread := f.moveWindows("posts/p", p, s, c.totals); len(unread) != c.want {
			t.Errorf("%s: unread %v, want %d", c.name, unread, c.want)
		}
	}
}
