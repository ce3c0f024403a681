//go:build race

package calendar

// raceOn: the race detector is on, and slows the calendar's walks over
// every zone some tenfold. They test no concurrency: under it, they walk
// a tenth of the zones, and the quick tier (go test -short, with no race
// detector, as CI runs it too) walks them all.
const raceOn = true
