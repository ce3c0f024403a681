package rollup

import (
	"testing"
	"time"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/fold"
)

// These tests check what a tracker plans for a counter's waiters, on a
// fake store and clock (store_test.go): which step, and after how long.

// viewed returns a store of a counter on numShards shards, two windows
// after its last write, and a tracker, growth off, that has read it.
func viewed(t *testing.T, numShards int) (*fakeStore, *tracker) {
	t.Helper()
	s := newFakeStore(t)
	s.numShards = numShards
	s.clock.advance(2 * s.window)
	tr := s.tracker()
	view(tr, s, false)
	return s, tr
}

// view makes the tracker know the parent as read now; lead says it wrote
// it last.
func view(tr *tracker, s *fakeStore, lead bool) *tracked {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	c := tr.counter("c")
	s.mu.Lock()
	c.p, c.known, c.read = s.parent(), true, s.clock.now()
	s.mu.Unlock()
	if lead {
		c.mine = c.p.Written
	}
	return c
}

// planFor holds hs and says what the tracker plans for counter c.
func planFor(tr *tracker, hs ...eventHint) (time.Duration, step) {
	for _, h := range hs {
		hold(tr, h)
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.plan(tr.counters["c"])
}

// untilDue is how long until the window of the stored parent's last
// write ends, and a margin.
func (s *fakeStore) untilDue() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.written.Add(s.window).Sub(s.clock.now()) + margin
}

func wantPlan(t *testing.T, gotWait time.Duration, got step, wantWait time.Duration, want step) {
	t.Helper()
	if got != want || gotWait != wantWait {
		t.Errorf("plan = %v after %v, want %v after %v", got, gotWait, want, wantWait)
	}
}

func TestPlanReadsAnUnknownParentAtOnce(t *testing.T) {
	s := newFakeStore(t)
	wait, next := planFor(s.tracker(), s.add(1, false))
	wantPlan(t, wait, next, 0, stepRead)
}

func TestPlanLeaderFoldsWhenItsWindowEnds(t *testing.T) {
	s := newFakeStore(t)
	tr := s.tracker()
	view(tr, s, true)
	s.clock.advance(300 * time.Millisecond)
	h := s.add(1, false)
	wait, next := planFor(tr, h)
	wantPlan(t, wait, next, s.untilDue(), stepFold)
}

func TestPlanLeaderTrustsAnOldViewOnlyWhereViewsStayCurrent(t *testing.T) {
	for _, stale := range []bool{false, true} {
		s := newFakeStore(t)
		tr := s.tracker()
		view(tr, s, true)
		if stale {
			tr.staleViews = 1
		}
		s.clock.advance(2 * s.window) // past a window and a half since the view
		wait, next := planFor(tr, s.add(1, false))
		want := stepFold
		if stale {
			want = stepRead
		}
		wantPlan(t, wait, next, margin, want)
	}
}

func TestPlanFoldsADueParentOnAFreshView(t *testing.T) {
	s := newFakeStore(t)
	tr := s.tracker()
	s.clock.advance(1200 * time.Millisecond) // another instance wrote it over a window ago
	view(tr, s, false)
	wait, next := planFor(tr, s.add(1, false))
	wantPlan(t, wait, next, margin, stepFold)
}

func TestPlanReadsADueParentFirstOnAnOldView(t *testing.T) {
	s := newFakeStore(t)
	tr := s.tracker()
	tr.staleViews = 1
	s.clock.advance(1200 * time.Millisecond)
	view(tr, s, false)
	s.clock.advance(1100 * time.Millisecond) // the view is over a window old
	wait, next := planFor(tr, s.add(1, false))
	wantPlan(t, wait, next, margin, stepRead)
}

// A follower reads just after the leader's fold is due, a little later at
// random; one holding a few hints trusts the leader up to confirmEvery;
// one holding confirmBatch reads when the fold is due again.
func TestPlanFollowerReadsAfterTheLeadersFold(t *testing.T) {
	for _, hints := range []int{1, trustLeader, DefaultConfirmBatch} {
		s := newFakeStore(t)
		tr := s.tracker()
		s.clock.advance(200 * time.Millisecond)
		view(tr, s, false) // another instance wrote it 200 ms ago
		hs := make([]eventHint, hints)
		for i := range hs {
			hs[i] = s.add(1, false)
		}
		lo := s.untilDue() + s.window/25
		hi := lo + s.window/25
		if hints == trustLeader {
			lo, hi = tr.confirmEvery*3/4+s.window/25, tr.confirmEvery*5/4+2*s.window/25
		}
		wait, next := planFor(tr, hs...)
		if next != stepRead || wait < lo || wait > hi {
			t.Errorf("%d hints: plan = %v after %v, want read after %v to %v", hints, next, wait, lo, hi)
		}
	}
}

func TestPlanWaitsForAHintDatedAheadOfTheServer(t *testing.T) {
	s := newFakeStore(t)
	tr := s.tracker()
	s.clock.advance(1200 * time.Millisecond)
	view(tr, s, false)
	h := s.add(1, false)
	h.At = h.At.Add(300 * time.Millisecond) // the event's clock is ahead
	wait, next := planFor(tr, h)
	wantPlan(t, wait, next, 300*time.Millisecond+margin, stepFold)
}

func TestPlanWaitsOutAPause(t *testing.T) {
	s := newFakeStore(t)
	tr := s.tracker()
	s.clock.advance(1200 * time.Millisecond)
	c := view(tr, s, false)
	c.pause = s.clock.now().Add(500 * time.Millisecond) // after a sum that could not be folded
	wait, next := planFor(tr, s.add(1, false))
	wantPlan(t, wait, next, 500*time.Millisecond-time.Microsecond, stepFold)
}

// A missing parent in the guide layout is folded (a fold creates it); an
// app's document that is gone is read again, and never created.
func TestPlanForAMissingParent(t *testing.T) {
	docs, err := core.ParseCounts("posts:likes")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []core.Layout{core.Default(), {Docs: docs}} {
		s := newFakeStore(t)
		s.layout, s.exists = l, false
		tr := s.tracker()
		view(tr, s, false)
		wait, next := planFor(tr, s.add(1, false))
		want := stepFold
		if l.OnDocs() {
			want = stepRead
		}
		wantPlan(t, wait, next, margin, want)
	}
}

// A read timed just after a document's creation that does not show it
// (the emulator's reads may miss a commit timed just before them) does not
// answer the creation: the tracker reads again absentLag after it, and a
// document still gone then has been deleted since.
func TestPlanReadsAgainAfterACreationNotShown(t *testing.T) {
	docs, err := core.ParseCounts("posts:likes")
	if err != nil {
		t.Fatal(err)
	}
	s := newFakeStore(t)
	s.layout, s.exists = core.Layout{Docs: docs}, false
	tr := s.tracker()
	created := eventHint{Counter: "c", Life: "l1", Created: true, At: s.clock.tick()}
	s.clock.advance(time.Microsecond)
	view(tr, s, false) // read after the creation's time, without the document
	c, w := hold(tr, created)
	if w == nil {
		t.Fatal("a read a microsecond after a creation, without the document, answered it")
	}
	tr.mu.Lock()
	wait, next := tr.plan(c)
	tr.mu.Unlock()
	wantPlan(t, wait, next, absentLag-time.Microsecond, stepRead)

	s.clock.advance(absentLag)
	view(tr, s, false)
	tr.mu.Lock()
	tr.settle(c)
	tr.mu.Unlock()
	if ok, err := answered(w); !ok || err != nil {
		t.Errorf("still gone absentLag after its creation: answered %v (%v), want the creation answered", ok, err)
	}
}

func TestPlanFoldsOnWhatAnEventSawWhenTheWindowEnds(t *testing.T) {
	s := newFakeStore(t)
	tr := s.tracker()
	s.clock.advance(300 * time.Millisecond)
	wait, next := planFor(tr, s.add(1, true)) // no read yet: the event tells the parent
	wantPlan(t, wait, next, s.untilDue(), stepFold)
	if c := tr.counters["c"]; !c.p.Seen {
		t.Errorf("the tracker's view is not the event's: %+v", c.p)
	}
}

// A counter on one shard holding measureAt events is summed once while its
// fold waits for the window, so that the fold has a rate to grow by; once
// it has that sum, it waits.
func TestPlanProbesABusyCounterOnOneShard(t *testing.T) {
	s := newFakeStore(t)
	tr := newTracker(s, s.clock.now, DefaultGrow, 0, nil)
	c := view(tr, s, true)
	if wait, next := planFor(tr, s.add(1, false), s.add(1, false), s.add(1, false)); next != stepFold {
		t.Errorf("%d events: plan = %v after %v, want a fold when the window ends", measureAt-1, next, wait)
	}
	wait, next := planFor(tr, s.add(1, false))
	wantPlan(t, wait, next, 0, stepProbe)
	tr.mu.Lock()
	c.base = fold.Sum{At: s.clock.now(), Values: []int64{4}}
	tr.mu.Unlock()
	wait, next = planFor(tr)
	wantPlan(t, wait, next, s.untilDue(), stepFold)
}
