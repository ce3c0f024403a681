package calendar

import (
	"fmt"
	"strings"
	"time"
)

// Unit is the length of a window's buckets: calendar minutes, hours,
// days, weeks (from Monday) or months, in the time zone windows are kept in
// (TALLY_TIME_ZONE; UTC unless it says).
//
// A bucket is a calendar unit as the zone's clocks show it, and the
// buckets of a unit cut time into intervals that follow each other:
//
//   - a bucket starts at its local calendar start (midnight, the hour),
//     or, where the clocks skip that start (a zone that goes from 23:59 to
//     01:00), at the first instant after it, the change of the clocks;
//   - a day, a week or a month is one bucket however long it is (23 or 25
//     hours across a change); an hour or a minute that the clocks show
//     twice (when they go back) is two buckets, one at each offset from
//     UTC, so that no bucket's start is after an instant it holds.
//
// Each is computed from the zone's own periods (time.Time.ZoneBounds),
// never by adding hours to a local time: a date that the clocks skip
// has no local midnight to add to.
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

// bucketKey names the calendar unit an instant's clock shows: the local
// start of the unit, as a wall clock (a time in UTC holding the local
// fields), and, for minutes and hours, the offset from UTC, so that an
// hour shown twice is two keys.
type bucketKey struct {
	wall   time.Time
	offset int
}

// key is the calendar unit of u that t's clock shows in t's location.
func (u Unit) key(t time.Time) bucketKey {
	_, off := t.Zone()
	w := t.UTC().Add(time.Duration(off) * time.Second)
	y, m, d := w.Date()
	k := bucketKey{}
	switch u {
	case Minute:
		k.wall, k.offset = w.Truncate(time.Minute), off
	case Hour:
		k.wall, k.offset = w.Truncate(time.Hour), off
	case Day:
		k.wall = time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	case Week:
		back := (int(w.Weekday()) + 6) % 7 // days since Monday
		k.wall = time.Date(y, m, d-back, 0, 0, 0, 0, time.UTC)
	default:
		k.wall = time.Date(y, m, 1, 0, 0, 0, 0, time.UTC)
	}
	return k
}

// after is the wall clock of the start of the unit of u after the one
// that starts at the wall clock w.
func (u Unit) after(w time.Time) time.Time {
	switch u {
	case Minute:
		return w.Add(time.Minute)
	case Hour:
		return w.Add(time.Hour)
	case Day:
		return w.AddDate(0, 0, 1)
	case Week:
		return w.AddDate(0, 0, 7)
	}
	return w.AddDate(0, 1, 0)
}

// at is the instant the clock shows w at in the period of the zone that s
// is in, whether or not that instant is in the period.
func at(w, s time.Time) time.Time {
	_, off := s.Zone()
	return w.Add(-time.Duration(off) * time.Second)
}

// Start is the start of the bucket of u that holds t, in loc: never after
// t.
func (u Unit) Start(t time.Time, loc *time.Location) time.Time {
	if loc == nil {
		loc = time.UTC
	}
	s := t.In(loc)
	k := u.key(s)
	for {
		// In the period of the zone that s is in, the clock runs on
		// without a change from the period's start: the bucket starts at
		// its calendar start if that is in the period; else it began at
		// the period's start, or before, if the clock showed the same
		// unit just before the change.
		first := periodStart(s)
		c := at(k.wall, s)
		if first.IsZero() || c.After(first) {
			return c.In(loc)
		}
		before := first.Add(-time.Nanosecond)
		if u.key(before) != k {
			return first
		}
		s = before
	}
}

// Next is the start of the bucket after the one that starts at start:
// always after it.
func (u Unit) Next(start time.Time, loc *time.Location) time.Time {
	if loc == nil {
		loc = time.UTC
	}
	s := start.In(loc)
	k := u.key(s)
	w := u.after(k.wall)
	for {
		// The next calendar start, if the clock reaches it in the period
		// s is in; else the bucket ends at the period's end if the clock
		// shows another unit from there, or runs on into the next period.
		end := periodEnd(s)
		c := at(w, s)
		if end.IsZero() || c.Before(end) {
			return c.In(loc)
		}
		if u.key(end) != k {
			return end
		}
		s = end
	}
}

// periodStart is the start of the period of s's zone that s is in, as
// time.Time.ZoneBounds gives it (zero if none), or, where that is after
// s, the last change of the offset within a day before s, or a day before
// s if there is none: a bound that need not be a change of the clocks,
// which the callers check.
func periodStart(s time.Time) time.Time {
	first, _ := s.ZoneBounds()
	if !first.After(s) {
		return first
	}
	from := s.Add(-24 * time.Hour)
	_, a := from.Zone()
	if _, b := s.Zone(); a != b {
		return change(from, s)
	}
	return from
}

// periodEnd is the end of the period of s's zone that s is in, as
// time.Time.ZoneBounds gives it (zero if none), or, where that is not
// after s, the first change of the offset within a day after s, or a day
// after s if there is none. (Go reports an end at or before s on the last
// day of a leap year when it extends a zone by its rule: Europe/Paris on
// 2028-12-31, from Go's own zoneinfo.zip.)
func periodEnd(s time.Time) time.Time {
	_, end := s.ZoneBounds()
	if end.IsZero() || end.After(s) {
		return end
	}
	return change(s, s.Add(24*time.Hour))
}

// change is the first instant in (lo, hi] at which the offset differs from
// lo's, if hi's does; else hi.
func change(lo, hi time.Time) time.Time {
	_, off := lo.Zone()
	if _, o := hi.Zone(); o == off {
		return hi
	}
	for hi.Sub(lo) > time.Nanosecond {
		mid := lo.Add(hi.Sub(lo) / 2)
		if _, o := mid.Zone(); o == off {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}

// Prev is the start of the bucket before the one that starts at start.
func (u Unit) Prev(start time.Time, loc *time.Location) time.Time {
	return u.Start(start.Add(-time.Nanosecond), loc)
}

// BucketKey is how a bucket's start names it in a series: its instant,
// RFC 3339 in UTC, which sorts as the buckets do.
func BucketKey(start time.Time) string { return start.UTC().Format(time.RFC3339) }

// Zone is the time zone of the IANA database named name, in which
// buckets start. "Local" is refused: it names whatever zone the machine
// reading it has, so the functions, the command and a client elsewhere
// would each take another day for a bucket, and the name recorded for
// them says none.
func Zone(name string) (*time.Location, error) {
	if name == "Local" || name == "" {
		return nil, fmt.Errorf("not a zone's name: give the zone's name in the IANA database (Europe/Paris, America/New_York, UTC), which every machine reads alike")
	}
	z, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("not a time zone of the IANA database (Europe/Paris, America/New_York, UTC): %v", err)
	}
	return z, nil
}
