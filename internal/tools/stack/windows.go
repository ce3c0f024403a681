package stack

import (
	"context"
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
	zone := s.o.Config.Layout.Zone
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

// moveOnce runs the boundary job once, now.
func (s *Stack) moveOnce() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rep, err := s.admin.MoveWindows(ctx, time.Now(), func(id string, err error) {
		s.o.Logger.Error("stack: could not move a counter's windows at a boundary", "counter", id, "error", err.Error())
	})
	if err != nil {
		s.o.Logger.Error("stack: the boundary job", "error", err.Error())
		return
	}
	if rep.Due > 0 {
		s.o.Logger.Info("stack: windows moved at a boundary", "due", rep.Due, "moved", rep.Moved, "errors", rep.Errors, "took_ms", rep.TookMS)
	}
}
