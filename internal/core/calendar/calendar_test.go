package calendar

import (
	"testing"
	"time"
)

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
		u    Unit
		want string
	}{
		{Minute, "2026-03-29T04:30:00+02:00"},
		{Hour, "2026-03-29T04:00:00+02:00"},
		{Day, "2026-03-29T00:00:00+01:00"},
		{Week, "2026-03-23T00:00:00+01:00"},
		{Month, "2026-03-01T00:00:00+01:00"},
	} {
		if got := c.u.Start(at, paris).Format(time.RFC3339); got != c.want {
			t.Errorf("%s.Start = %s, want %s", c.u, got, c.want)
		}
	}
	if got := Day.Next(Day.Start(at, paris), paris); got.Sub(Day.Start(at, paris)) != 23*time.Hour {
		t.Errorf("the day the clocks went forward lasts %v", got.Sub(Day.Start(at, paris)))
	}
	for _, u := range []Unit{Minute, Hour, Day, Week, Month} {
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
