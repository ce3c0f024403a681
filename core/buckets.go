package core

import (
	"fmt"
	"strings"
	"time"
)

// Unit is the length of a window's buckets: calendar minutes, hours,
// days, weeks (from Monday) or months, in the time zone windows are kept in
// (TALLY_TIME_ZONE; UTC unless it says).
type Unit string

// The units of a window.
const (
	Minute Unit = "minute"
	Hour   Unit = "hour"
	Day    Unit = "day"
	Week   Unit = "week"
	Month  Unit = "month"
)

// ParseUnit reads a unit, singular or plural.
func ParseUnit(s string) (Unit, error) {
	u := Unit(strings.TrimSuffix(s, "s"))
	switch u {
	case Minute, Hour, Day, Week, Month:
		return u, nil
	}
	return "", fmt.Errorf("the unit %q: want minute, hour, day, week or month", s)
}

// Start is the start of the bucket of u that holds t, in loc.
func (u Unit) Start(t time.Time, loc *time.Location) time.Time {
	if loc == nil {
		loc = time.UTC
	}
	t = t.In(loc)
	y, m, d := t.Date()
	switch u {
	case Minute:
		return t.Truncate(time.Minute)
	case Hour:
		// An hour is an hour of the clock, also across a change of offset.
		return time.Date(y, m, d, t.Hour(), 0, 0, 0, loc)
	case Day:
		return time.Date(y, m, d, 0, 0, 0, 0, loc)
	case Week:
		back := (int(t.Weekday()) + 6) % 7 // days since Monday
		return time.Date(y, m, d-back, 0, 0, 0, 0, loc)
	}
	return time.Date(y, m, 1, 0, 0, 0, 0, loc)
}

// Next is the start of the bucket after the one that starts at start.
func (u Unit) Next(start time.Time, loc *time.Location) time.Time {
	if loc == nil {
		loc = time.UTC
	}
	start = start.In(loc)
	y, m, d := start.Date()
	switch u {
	case Minute:
		return start.Add(time.Minute)
	case Hour:
		// Past the hour, whatever the offset does; an hour that comes twice
		// (when clocks go back) is two buckets.
		if n := u.Start(start.Add(90*time.Minute), loc); n.After(start) {
			return n
		}
		return start.Add(time.Hour)
	case Day:
		return time.Date(y, m, d+1, 0, 0, 0, 0, loc)
	case Week:
		return time.Date(y, m, d+7, 0, 0, 0, 0, loc)
	}
	return time.Date(y, m+1, 1, 0, 0, 0, 0, loc)
}

// Prev is the start of the bucket before the one that starts at start.
func (u Unit) Prev(start time.Time, loc *time.Location) time.Time {
	return u.Start(start.Add(-time.Nanosecond), loc)
}

// BucketKey is how a bucket's start names it in a series: its instant,
// RFC 3339 in UTC, which sorts as the buckets do.
func BucketKey(start time.Time) string { return start.UTC().Format(time.RFC3339) }

// Cron is the schedule, in the time zone of the buckets, of a job that runs
// at each start of a bucket of u, for Cloud Scheduler.
func (u Unit) Cron() string {
	switch u {
	case Minute:
		return "* * * * *"
	case Hour:
		return "0 * * * *"
	case Day:
		return "0 0 * * *"
	case Week:
		return "0 0 * * 1"
	}
	return "0 0 1 * *"
}
