package counter

import (
	"fmt"
	"time"
)

// ProgressEvery is the least time between two reports of a long
// operation's progress (Options.Progress).
const ProgressEvery = 3 * time.Second

// progress returns what a long operation on id calls after each step: it
// reports the step to Options.Progress, if set, once ProgressEvery has
// passed since the operation began or last reported.
func (c *Client) progress(id string) func(format string, args ...any) {
	if c.report == nil {
		return func(string, ...any) {}
	}
	last := time.Now()
	return func(format string, args ...any) {
		if now := time.Now(); now.Sub(last) >= c.every {
			last = now
			c.report(id + ": " + fmt.Sprintf(format, args...))
		}
	}
}
