package stack

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/tallycounters/tally/internal/tools/emulator"
)

// How a stack stops: it drains what is in flight, saves the data, and
// stops what it started.

// ExportTimeout bounds, by default (Options.SaveTimeout), the save of
// the data when the stack stops, on top of the draining's bound: the wait
// for an emulator that does not answer (stalled: a machine that paused
// it, a long pause of its JVM) and the export. The data is saved however
// long events take.
const ExportTimeout = 2 * time.Minute

// Stop drains, then saves, then stops: new increments are refused, the
// events the bridge holds are answered (each by a fold), for at most half
// of ctx's time and MaxDrain, every counter is folded (which covers writes whose events
// the emulator had not handed over), for the rest of it, the data is
// exported when DataDir is set, whatever the draining left undone (within
// its own bound, which also waits for an emulator that does not answer),
// and then the servers and the emulator stop. Its error says what was
// left: counters not folded, events not answered before a fold that could
// not be made, data not saved; events left unanswered with every counter
// folded after them are only counted (Unanswered), as the totals hold
// their writes. A start folds every counter again.
func (s *Stack) Stop(ctx context.Context) error {
	s.draining.Store(true)
	var errs []error
	unanswered := s.drain(ctx)
	save := s.Emulator != nil && s.o.DataDir != ""
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.saveTimeout())
	defer cancel()
	up := s.emulatorUp()
	if !up && save {
		s.o.Logger.Warn("stack: the Firestore emulator does not answer; waiting for it, to save the data", "dir", s.o.DataDir, "within", s.saveTimeout().String())
		if up = s.waitEmulator(sctx); up && unanswered != nil {
			unanswered = s.drain(sctx) // the events waited on the emulator too: their time again
		}
	}
	settled := false
	if up && !s.o.ManualJobs {
		if _, failed, err := s.settle(ctx); err != nil {
			errs = append(errs, err)
		} else if len(failed) > 0 {
			errs = append(errs, fmt.Errorf("stack: %d counter(s) not folded, first %s: %w", len(failed), failed[0].Counter, failed[0].Err))
		} else {
			settled = true
		}
		if save {
			if err := s.Emulator.Export(sctx, s.o.Config.Project, s.o.DataDir); err != nil {
				errs = append(errs, err)
			} else {
				s.Saved = true
			}
		}
	}
	switch {
	case unanswered != nil && settled:
		// Every counter was folded after them: the totals hold their
		// writes all the same.
		s.Unanswered = s.Bridge.Pending()
	case unanswered != nil:
		errs = append(errs, unanswered)
	}
	if save && !s.Saved {
		// Never a stop that looks clean with the data lost: what was
		// saved last is still there, untouched.
		errs = append(errs, fmt.Errorf("stack: the data was not saved in %s: the emulator did not answer, or its export did not finish, within %s; "+
			"the folder holds the data saved last, as it was", s.o.DataDir, s.saveTimeout()))
	}
	errs = append(errs, s.shutdown())
	return errors.Join(errs...)
}

// saveTimeout bounds the save of the data when the stack stops.
func (s *Stack) saveTimeout() time.Duration {
	if s.o.SaveTimeout > 0 {
		return s.o.SaveTimeout
	}
	return ExportTimeout
}

// waitEmulator waits, within ctx, for the emulator to answer again, and
// says whether it does; false at once if its process is gone.
func (s *Stack) waitEmulator(ctx context.Context) bool {
	for {
		if s.emulatorUp() {
			return true
		}
		select {
		case <-s.Emulator.Done():
			return false
		case <-ctx.Done():
			return false
		case <-time.After(time.Second):
		}
	}
}

// drain waits for the events in flight to be answered, for at most half
// of ctx's time and MaxDrain, and says how many were left if not.
func (s *Stack) drain(ctx context.Context) error {
	drain, cancel := context.WithTimeout(ctx, drainTime(ctx))
	defer cancel()
	if err := s.Bridge.Wait(drain); err != nil {
		return fmt.Errorf("stack: %d event(s) left unanswered: %w", s.Bridge.Pending(), err)
	}
	return nil
}

// MaxDrain bounds the wait for the events in flight when the stack
// stops: an event is answered within milliseconds, once a fold covers it,
// and one left unanswered costs nothing that the next start does not put
// right, as it folds every counter.
const MaxDrain = 10 * time.Second

// drainTime is what Stop gives the events in flight: half the time left
// before ctx's deadline, at most MaxDrain.
func drainTime(ctx context.Context) time.Duration {
	if dl, ok := ctx.Deadline(); ok {
		return min(time.Until(dl)/2, MaxDrain)
	}
	return MaxDrain
}

// emulatorUp reports whether the emulator answers.
func (s *Stack) emulatorUp() bool {
	if s.Emulator != nil {
		select {
		case <-s.Emulator.Done():
			return false
		default:
		}
	}
	return emulator.Up(s.EmulatorHost)
}

// shutdown stops whatever was started, in reverse.
func (s *Stack) shutdown() error {
	if s.watching != nil {
		close(s.watching)
		<-s.watched
		s.watching = nil
	}
	if s.reading != nil {
		close(s.reading)
		<-s.read
		s.reading = nil
	}
	if s.moving != nil {
		close(s.moving)
		<-s.moved
		s.moving = nil
	}
	for _, sv := range s.servers {
		sv.Close()
	}
	s.servers = nil
	for _, c := range s.closers {
		c.Close()
	}
	s.closers = nil
	if s.Functions != nil {
		s.Functions.Close()
	}
	if s.Contention != nil {
		s.Contention.Close()
	}
	var err error
	if s.Emulator != nil {
		err = s.Emulator.Stop()
	}
	if s.Auth != nil {
		s.Auth.Stop()
	}
	if s.PubSub != nil {
		s.PubSub.Stop()
	}
	if s.Rules != "" {
		os.RemoveAll(filepath.Dir(s.Rules))
	}
	return err
}
