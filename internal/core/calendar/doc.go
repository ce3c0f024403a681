// Package calendar cuts time into the buckets of tally's windows:
// calendar minutes, hours, days, weeks (from Monday) and months as a time
// zone's clocks show them, on every day, those on which the clocks change
// included (see Unit), and the schedule on which the boundary job runs at
// each bucket's start (Unit.Schedule). It knows nothing of Firestore or of
// counts: package core keeps windows over its buckets.
package calendar
