package counter

import "time"

// ReportEvery sets how often c reports a long operation's progress.
func ReportEvery(c *Client, d time.Duration) { c.every = d }

// ListPage sets how many counters c lists a page at a time, in the guide
// layout.
func ListPage(c *Client, n int) { c.page = n }
