package calendar

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ScheduleYears is how far ahead Schedule looks at a zone's calendar.
const ScheduleYears = 10

// Schedule is a cron schedule, in UTC, of a job that runs at each start
// of a bucket of u in loc from the year of from for ScheduleYears: for
// Cloud Scheduler, which runs a schedule in a zone by its wall clock, and
// so may skip or repeat a run where the clocks change. It lists every
// minute, hour and day on which a start falls in UTC; a run on a day or
// at an hour that is no start (Paris's midnight is 23:00 UTC in winter,
// 22:00 in summer, so the job runs at both every day) finds nothing due,
// for one read.
func (u Unit) Schedule(loc *time.Location, from time.Time) string {
	if loc == nil {
		loc = time.UTC
	}
	var minutes, hours, days, weekdays []int
	add := func(set *[]int, v int) {
		if !slices.Contains(*set, v) {
			*set = append(*set, v)
		}
	}
	b := u.Start(time.Date(from.Year(), 1, 1, 0, 0, 0, 0, time.UTC), loc)
	end := b.AddDate(ScheduleYears, 0, 0)
	if u == Minute {
		end = b.AddDate(0, 0, 7) // a week holds every minute of the hour
	}
	for ; b.Before(end); b = u.Next(b, loc) {
		t := b.UTC()
		if t.Second() != 0 || t.Nanosecond() != 0 {
			continue // a start within a minute (no zone has had one since 1972): the next run moves it
		}
		add(&minutes, t.Minute())
		add(&hours, t.Hour())
		add(&days, t.Day())
		add(&weekdays, int(t.Weekday()))
	}
	field := func(set []int, all int) string {
		if len(set) == all {
			return "*"
		}
		slices.Sort(set)
		s := make([]string, len(set))
		for i, v := range set {
			s[i] = strconv.Itoa(v)
		}
		return strings.Join(s, ",")
	}
	m, h := field(minutes, 60), field(hours, 24)
	switch u {
	case Minute:
		return "* * * * *"
	case Hour:
		return fmt.Sprintf("%s * * * *", m)
	case Day:
		return fmt.Sprintf("%s %s * * *", m, h)
	case Week:
		return fmt.Sprintf("%s %s * * %s", m, h, field(weekdays, 7))
	}
	return fmt.Sprintf("%s %s %s * *", m, h, field(days, 31))
}

// RecheckEvery is how soon after a start the boundary job runs again to
// find what its run at the start left due (a part of it lost, or failed
// past its retries): well within Firestore's hour of past versions, which
// the move of a document at its boundary reads.
const RecheckEvery = 15 * time.Minute

// Rechecked is the cron schedule s with a run RecheckEvery after each of
// its minutes, within its hour: "0 22,23 * * *" runs at 22:00, 22:15,
// 22:30, 22:45, 23:00 and so on. A run that finds nothing due costs one
// read. A schedule of every minute is its own recheck.
func Rechecked(s string) string {
	f := strings.Fields(s)
	if len(f) != 5 || f[0] == "*" {
		return s
	}
	var minutes []int
	for _, m := range strings.Split(f[0], ",") {
		n, err := strconv.Atoi(m)
		if err != nil {
			return s
		}
		for v := n; v < 60; v += int(RecheckEvery / time.Minute) {
			if !slices.Contains(minutes, v) {
				minutes = append(minutes, v)
			}
		}
	}
	slices.Sort(minutes)
	out := make([]string, len(minutes))
	for i, v := range minutes {
		out[i] = strconv.Itoa(v)
	}
	f[0] = strings.Join(out, ",")
	return strings.Join(f, " ")
}
