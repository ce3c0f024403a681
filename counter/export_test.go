package counter

import "time"

// ReportEvery sets how often c reports a long operation's progress.
func ReportEvery(c *Client, d time.Duration) { c.every = d }
