package calendar

import (
	"archive/zip"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

var units = []Unit{Minute, Hour, Day, Week, Month}

// zones are every zone of Go's time zone database, loaded from it: the
// zoneinfo.zip that ZONEINFO names, or Go's own.
func zones(t *testing.T) []*time.Location {
	t.Helper()
	path := os.Getenv("ZONEINFO")
	if path == "" || filepath.Ext(path) != ".zip" {
		root, err := exec.Command("go", "env", "GOROOT").Output()
		if err != nil {
			t.Fatalf("go env GOROOT: %v", err)
		}
		path = filepath.Join(strings.TrimSpace(string(root)), "lib", "time", "zoneinfo.zip")
	}
	z, err := zip.OpenReader(path)
	if err != nil {
		t.Fatalf("the time zone database: %v (Go installs it at $GOROOT/lib/time/zoneinfo.zip; ZONEINFO may name another)", err)
	}
	defer z.Close()
	var out []*time.Location
	for _, f := range z.File {
		if f.FileInfo().IsDir() {
			continue
		}
		r, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(r)
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		loc, err := time.LoadLocationFromTZData(f.Name, data)
		if err != nil {
			continue // not a zone (the database's tables)
		}
		out = append(out, loc)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	if len(out) < 300 {
		t.Fatalf("%s holds %d zones; want the whole database", path, len(out))
	}
	return out
}

// transitions are the instants in [from, to) at which loc's offset from
// UTC changes, found by looking at the offset every day (no zone has
// changed its clocks twice within a day since 1972) and halving each day
// in which it changed down to the nanosecond: nothing of the calendar's
// own code.
func transitions(loc *time.Location, from, to time.Time) []time.Time {
	var out []time.Time
	offset := func(t time.Time) int { _, o := t.In(loc).Zone(); return o }
	for lo := from; lo.Before(to); lo = lo.Add(24 * time.Hour) {
		hi := lo.Add(24 * time.Hour)
		if offset(lo) == offset(hi) {
			continue
		}
		a, b := lo, hi
		for b.Sub(a) > time.Nanosecond {
			mid := a.Add(b.Sub(a) / 2)
			if offset(mid) == offset(a) {
				a = mid
			} else {
				b = mid
			}
		}
		out = append(out, b)
	}
	return out
}

// checkBucket checks the bucket of u that holds x in loc against the
// calendar itself: it starts no later than x and ends after it; every
// instant in it shows one calendar unit (and, for minutes and hours, one
// offset) and the instants just outside it show another; it starts at
// that unit's local start or at a change of the clocks (where the start
// is skipped, or shown at another offset); Start, Next and Prev agree.
func checkBucket(t *testing.T, u Unit, loc *time.Location, x time.Time, changes []time.Time) {
	t.Helper()
	b := u.Start(x, loc)
	n := u.Next(b, loc)
	k := u.key(x.In(loc))
	fail := func(what string) {
		t.Helper()
		t.Fatalf("%s %s, the bucket of %s (%s): [%s, %s): %s", loc, u, x.UTC().Format(time.RFC3339Nano), x.In(loc).Format(time.RFC3339), b.Format(time.RFC3339), n.Format(time.RFC3339), what)
	}
	switch {
	case b.After(x):
		fail("starts after the instant")
	case !n.After(x):
		fail("ends at or before the instant")
	case u.key(b) != k || u.key(n.Add(-time.Nanosecond)) != k:
		fail("its ends show another unit")
	case u.key(n) == k:
		fail("the bucket after it shows the same unit")
	case u.key(b.Add(-time.Nanosecond)) == k:
		fail("the instant before it shows the same unit")
	case !u.Start(b, loc).Equal(b) || !u.Start(n.Add(-time.Nanosecond), loc).Equal(b) || !u.Prev(n, loc).Equal(b) || !u.Start(n, loc).Equal(n):
		fail("Start, Next and Prev disagree")
	}
	if !at(k.wall, b).Equal(b) && !slices.ContainsFunc(changes, b.Equal) {
		fail("starts neither at its calendar start nor at a change of the clocks")
	}
	// Within a period of the zone the clock runs on, so the bucket shows
	// one unit throughout if it does on each side of each change in it.
	i := sort.Search(len(changes), func(i int) bool { return changes[i].After(b) })
	for ; i < len(changes) && changes[i].Before(n); i++ {
		if u.key(changes[i].In(loc)) != k || u.key(changes[i].Add(-time.Nanosecond).In(loc)) != k {
			fail("the clocks change into another unit within it, at " + changes[i].UTC().Format(time.RFC3339))
		}
	}
}

// TestBucketsEveryZone: in every zone of the database, from 2026 to 2035,
// each bucket of each unit holds exactly the instants it claims, around
// every change of the clocks and at random instants; days, weeks and
// months are walked bucket by bucket for all ten years, each Next after
// its start.
func TestBucketsEveryZone(t *testing.T) {
	from, to := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2036, 1, 1, 0, 0, 0, 0, time.UTC)
	near := []time.Duration{-25 * time.Hour, -61 * time.Minute, -30 * time.Minute, -time.Nanosecond, 0, time.Nanosecond,
		29 * time.Minute, 59 * time.Minute, time.Hour, 90 * time.Minute, 25 * time.Hour}
	rng := rand.New(rand.NewPCG(1, 2))
	checked, changed := 0, 0
	for i, loc := range zones(t) {
		if raceOn && i%10 != 0 {
			continue
		}
		changes := transitions(loc, from.AddDate(0, -2, 0), to.AddDate(0, 2, 0))
		inRange := transitions(loc, from, to)
		changed += len(inRange)
		for _, u := range units {
			for _, c := range inRange {
				for _, d := range near {
					checkBucket(t, u, loc, c.Add(d), changes)
					checked++
				}
			}
			for range 40 {
				checkBucket(t, u, loc, from.Add(time.Duration(rng.Int64N(int64(to.Sub(from))))), changes)
				checked++
			}
			if u == Minute || u == Hour {
				continue
			}
			steps := 0
			for b := u.Start(from, loc); b.Before(to); steps++ {
				n := u.Next(b, loc)
				if !n.After(b) || !u.Start(n, loc).Equal(n) || !u.Prev(n, loc).Equal(b) || steps > 4000 {
					t.Fatalf("%s %s: after %s comes %s (step %d)", loc, u, b.Format(time.RFC3339), n.Format(time.RFC3339), steps)
				}
				b = n
			}
		}
	}
	t.Logf("%d buckets checked; %d changes of the clocks in 2026-2035", checked, changed)
}

// TestBucketsOnChangesSeen: the days and hours that went wrong before:
// a day whose midnight the clocks skip starts at the change and ends at
// the next midnight; an hour the clocks show twice is two buckets, the
// first starting before the instants it holds.
func TestBucketsOnChangesSeen(t *testing.T) {
	load := func(name string) *time.Location {
		loc, err := time.LoadLocation(name)
		if err != nil {
			t.Fatal(err)
		}
		return loc
	}
	for _, c := range []struct {
		zone       string
		day        string // a day whose midnight is skipped
		start, end string // its bucket
	}{
		{"America/Havana", "2026-03-08T12:00:00Z", "2026-03-08T01:00:00-04:00", "2026-03-09T00:00:00-04:00"},
		{"America/Santiago", "2026-09-06T12:00:00Z", "2026-09-06T01:00:00-03:00", "2026-09-07T00:00:00-03:00"},
		{"Atlantic/Azores", "2026-03-29T12:00:00Z", "2026-03-29T01:00:00Z", "2026-03-30T00:00:00Z"},
	} {
		loc := load(c.zone)
		x, _ := time.Parse(time.RFC3339, c.day)
		b := Day.Start(x, loc)
		n := Day.Next(b, loc)
		if got := b.Format(time.RFC3339); got != c.start {
			t.Errorf("%s: the day of %s starts at %s, want %s", c.zone, c.day, got, c.start)
		}
		if got := n.Format(time.RFC3339); got != c.end {
			t.Errorf("%s: the day of %s ends at %s, want %s", c.zone, c.day, got, c.end)
		}
		if prev := Day.Prev(b, loc); Day.Next(prev, loc) != b {
			t.Errorf("%s: the day before %s is %s, which ends at %s", c.zone, b, prev, Day.Next(prev, loc))
		}
	}
	paris := load("Europe/Paris")
	first := time.Date(2026, 10, 25, 0, 30, 0, 0, time.UTC)  // 02:30 CEST
	second := time.Date(2026, 10, 25, 1, 30, 0, 0, time.UTC) // 02:30 CET, an hour later
	b1, b2 := Hour.Start(first, paris), Hour.Start(second, paris)
	if !b1.Equal(time.Date(2026, 10, 25, 0, 0, 0, 0, time.UTC)) || !b2.Equal(time.Date(2026, 10, 25, 1, 0, 0, 0, time.UTC)) || Hour.Next(b1, paris) != b2 {
		t.Errorf("02:00 in Paris, shown twice: buckets %s and %s, want 00:00Z and 01:00Z", b1.UTC(), b2.UTC())
	}
	ny := load("America/New_York")
	a, b := time.Date(2026, 11, 1, 5, 30, 0, 0, time.UTC), time.Date(2026, 11, 1, 6, 30, 0, 0, time.UTC) // 01:30 EDT, 01:30 EST
	if Hour.Start(a, ny).Equal(Hour.Start(b, ny)) {
		t.Errorf("01:00 in New York, shown twice, is one bucket: %s", Hour.Start(a, ny))
	}
}
