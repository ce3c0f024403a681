package listen

import "time"

// SetStallCheck sets how long a stream may answer nothing before the
// watchdog reads its document, until the test ends (restore).
func SetStallCheck(d time.Duration) (restore func()) {
	was := stallCheck.Swap(int64(d))
	return func() { stallCheck.Store(was) }
}

// Stalls is how many streams the watchdogs found stalled so far.
func Stalls() int64 { return stalls.Load() }
