package calendar

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// cronRuns reports whether the cron schedule s, in UTC, runs at t.
func cronRuns(t *testing.T, s string, at time.Time) bool {
	t.Helper()
	f := strings.Fields(s)
	if len(f) != 5 {
		t.Fatalf("schedule %q: want 5 fields", s)
	}
	in := func(field string, v int) bool {
		if field == "*" {
			return true
		}
		for _, x := range strings.Split(field, ",") {
			n, err := strconv.Atoi(x)
			if err != nil {
				t.Fatalf("schedule %q: field %q", s, field)
			}
			if n == v {
				return true
			}
		}
		return false
	}
	u := at.UTC()
	return u.Second() == 0 && in(f[0], u.Minute()) && in(f[1], u.Hour()) && in(f[2], u.Day()) && in(f[3], int(u.Month())) && in(f[4], int(u.Weekday()))
}

// TestScheduleRunsAtEveryStart: the boundary job's schedule, in UTC, runs
// at every start of a bucket in the zone for ten years, across every
// change of the clocks, in the zones of the database (every one for weeks
// and months, a sample for days and hours).
func TestScheduleRunsAtEveryStart(t *testing.T) {
	from := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	for i, loc := range zones(t) {
		for _, u := range []Unit{Hour, Day, Week, Month} {
			hours := 20
			if raceOn {
				hours = 200
			}
			if u == Hour && i%hours != 0 || u == Day && i%4 != 0 || raceOn && i%10 != 0 {
				continue // of hours and days, a sample of the zones, every bucket for ten years
			}
			s := u.Schedule(loc, from)
			b := u.Start(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), loc)
			for end := b.AddDate(ScheduleYears, 0, 0); b.Before(end); b = u.Next(b, loc) {
				if !cronRuns(t, s, b) {
					t.Fatalf("%s %s: %q does not run at %s (%s)", loc, u, s, b.UTC().Format(time.RFC3339), b.Format(time.RFC3339))
				}
			}
		}
	}
	if s := Day.Schedule(time.UTC, from); s != "0 0 * * *" {
		t.Errorf("a day in UTC: %q", s)
	}
	paris, _ := time.LoadLocation("Europe/Paris")
	if s := Day.Schedule(paris, from); !slices.Equal(strings.Fields(s)[:2], []string{"0", "22,23"}) {
		t.Errorf("a day in Paris: %q, want 22:00 and 23:00 UTC", s)
	}
}

// TestRechecked: the boundary job runs again every 15 minutes after each
// start, within its hour, to find what a lost part left due.
func TestRechecked(t *testing.T) {
	for in, want := range map[string]string{
		"0 22,23 * * *": "0,15,30,45 22,23 * * *",
		"30 4,5 * * *":  "30,45 4,5 * * *",
		"0,30 * * * *":  "0,15,30,45 * * * *",
		"50 0 1 * *":    "50 0 1 * *",
		"* * * * *":     "* * * * *",
		"0 23 * * 0":    "0,15,30,45 23 * * 0",
	} {
		if got := Rechecked(in); got != want {
			t.Errorf("Rechecked(%q) = %q, want %q", in, got, want)
		}
	}
}
