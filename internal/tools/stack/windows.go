package stack

import (
	"context"
	"net/http"
	"time"

	"github.com/tallycounters/tally/internal/core/calendar"
)

// moveWindows is the boundary job, as deploy.sh schedules it in the
// cloud: at each start of a bucket of unit, the smallest of the windows
// declared, it moves the windows of the documents due (and once as the
// stack starts, for those that came due while it was stopped), until
// stop is closed.
func (s *Stack) moveWindows(unit calendar.Unit, stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	zone := s.o.layout().Zone
	for {
		s.moveOnce()
		next := unit.Next(unit.Start(time.Now(), zone), zone)
		timer := time.NewTimer(time.Until(next))
		select {
		case <-stop:
			timer.Stop()
			return
		case <-timer.C:
		}
	}
}

// moveOnce runs the boundary job once, now, as the scheduler does: a
// POST to Reconcile?windows, which lists the documents due and publishes
// their parts (or, in-process, moves them). The functions log what it
// did, as in the cloud.
func (s *Stack) moveOnce() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	code, body := s.StartJob(ctx, "?windows")
	if code != http.StatusOK {
		s.o.Logger.Error("stack: the boundary job", "status", code, "answer", string(body))
		return
	}
}
