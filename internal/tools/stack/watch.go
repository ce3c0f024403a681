package stack

import (
	"context"
	"time"
)

// watchEvery is how often an external emulator is checked.
const watchEvery = 500 * time.Millisecond

// watch follows an emulator the stack did not start. When it comes back
// after being down (restarted, its triggers lost), the Rollup trigger is
// registered again and every counter folded, since the events of writes
// made meanwhile were lost.
func (s *Stack) watch() {
	defer close(s.watched)
	tick := time.NewTicker(watchEvery)
	defer tick.Stop()
	up := true
	for {
		select {
		case <-s.watching:
			return
		case <-tick.C:
		}
		now := s.emulatorUp()
		if now && !up {
			s.comeBack()
		}
		up = now
	}
}

func (s *Stack) comeBack() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.register(ctx); err != nil {
		s.o.Logger.Error("stack: the emulator is back, but its trigger could not be registered", "emulator", s.EmulatorHost, "error", err.Error())
		return
	}
	n, _, err := s.settle(ctx)
	if err != nil {
		s.o.Logger.Error("stack: the emulator is back, but its totals could not be brought up to date", "error", err.Error())
		return
	}
	s.o.Logger.Info("stack: the emulator is back: trigger registered again, totals brought up to date", "emulator", s.EmulatorHost, "counters", n)
}
