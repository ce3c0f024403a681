package rollup

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/tallycounters/tally/internal/fold"
)

// These tests check what a tracker's folds read, sum and write, on a fake
// store and clock (store_test.go).

// takeStep holds hs, checks that the tracker plans want next, and takes
// that step when the plan says, on the fake clock.
func takeStep(t *testing.T, tr *tracker, want step, hs ...eventHint) []*waiter {
	t.Helper()
	var ws []*waiter
	for _, h := range hs {
		_, w := hold(tr, h)
		ws = append(ws, w)
	}
	tr.mu.Lock()
	c := tr.counters["c"]
	wait, next := tr.plan(c)
	tr.mu.Unlock()
	if next != want {
		t.Fatalf("plan = %v, want %v", next, want)
	}
	s := tr.store.(*fakeStore)
	s.clock.advance(max(wait, 0))
	if err := tr.take(context.Background(), c, next); err != nil {
		t.Fatalf("%v: %v", next, err)
	}
	return ws
}

func wantCalls(t *testing.T, s *fakeStore, reads, sums, writes int) {
	t.Helper()
	if got, want := s.calls(), [3]int{reads, sums, writes}; got != want {
		t.Errorf("reads, sums, writes = %v, want %v", got, want)
	}
}

func wantAnswered(t *testing.T, w *waiter, want bool) {
	t.Helper()
	got, err := answered(w)
	if got != want || err != nil {
		t.Errorf("answered = %v (%v), want %v", got, err, want)
	}
}

func wantTotal(t *testing.T, s *fakeStore, want int64) {
	t.Helper()
	if got := s.total(); got != want {
		t.Errorf("total = %d, want %d", got, want)
	}
}

func TestWaitAnswersACoveredHintWithNoCall(t *testing.T) {
	s := newFakeStore(t)
	h := s.add(1, false)
	s.otherFold()
	tr := s.tracker()
	view(tr, s, false)
	if err := tr.Wait(context.Background(), h); err != nil {
		t.Fatal(err)
	}
	wantCalls(t, s, 0, 0, 0)
}

// Wait runs the tracker's own loop: a due counter is folded, and the hint
// answered, with one sum and one write.
func TestWaitFoldsADueCounter(t *testing.T) {
	s, tr := viewed(t, 4) // no event sums
	if err := tr.Wait(context.Background(), s.add(3, false)); err != nil {
		t.Fatal(err)
	}
	wantCalls(t, s, 0, 1, 1)
	wantTotal(t, s, 3)
}

func TestWaitTriesAgainAfterAFailedSum(t *testing.T) {
	s := newFakeStore(t)
	s.numShards = 4
	s.clock.advance(2 * s.window)
	s.sumErr = errors.New("unavailable")
	tr := s.tracker()
	view(tr, s, false)
	if err := tr.Wait(context.Background(), s.add(3, false)); err != nil {
		t.Fatal(err)
	}
	wantCalls(t, s, 1, 2, 1) // the failure forgets the view: read, sum, write
	wantTotal(t, s, 3)
}

// On one shard, an event's counts are the fold: no read, no sum, one
// write, compare-and-set on the parent's update time the event carries.
func TestEventSumFoldsWithNoRead(t *testing.T) {
	s := newFakeStore(t)
	s.clock.advance(2 * s.window)
	tr := s.tracker()
	ws := takeStep(t, tr, stepFold, s.add(5, true))
	wantCalls(t, s, 0, 0, 1)
	wantTotal(t, s, 5)
	wantAnswered(t, ws[0], true)
}

// An event's counts are the whole counts only while the parent had one
// shard since before the event, and only for the parent's life.
func TestEventSumOnlyWhereShardZeroIsTheWholeCount(t *testing.T) {
	for _, tc := range []struct {
		name      string
		numShards int
		life      string // of the event's shard
		sums      int
	}{
		{"one shard", 1, "", 0},
		{"grown", 4, "", 1},
		{"another life", 1, "1700000000000000", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, tr := viewed(t, tc.numShards)
			h := s.add(5, false)
			h.Life = tc.life
			ws := takeStep(t, tr, stepFold, h)
			wantCalls(t, s, 0, tc.sums, 1)
			wantTotal(t, s, 5)
			wantAnswered(t, ws[0], true)
		})
	}
}

// A counter measured for growth folds on sums: its events' counts are not
// taken, so that no event decides its rate.
func TestEventSumNotTakenWhileMeasuring(t *testing.T) {
	s := newFakeStore(t)
	s.clock.advance(2 * s.window)
	tr := newTracker(s, s.clock.now, DefaultGrow, 0, nil)
	view(tr, s, false)
	takeStep(t, tr, stepFold, s.add(1, false), s.add(1, false), s.add(1, false), s.add(1, false))
	wantCalls(t, s, 0, 1, 1)
	wantTotal(t, s, 4)
}

// Where instances share counters, a fold long after an event sums
// instead, so that its as_of covers what other instances hold.
func TestEventSumLateOnlyWhereNoOtherInstanceFolds(t *testing.T) {
	for _, shared := range []float64{0, 1} {
		s := newFakeStore(t)
		tr := s.tracker()
		tr.shared = shared
		s.clock.advance(2 * s.window)
		view(tr, s, false)
		h := s.add(2, false)
		s.clock.advance(s.window) // the fold comes a window after the event
		takeStep(t, tr, stepFold, h)
		sums := 0
		if shared == 1 {
			sums = 1
		}
		wantCalls(t, s, 0, sums, 1)
		wantTotal(t, s, 2)
	}
}

// A write of the app's between the view and the fold: the fold reads the
// parent again and writes the same sum on it.
func TestStaleViewReadsAndWritesTheSameSum(t *testing.T) {
	s, tr := viewed(t, 4)
	h := s.add(7, false)
	s.updated = s.clock.tick() // the app wrote another field
	ws := takeStep(t, tr, stepFold, h)
	wantCalls(t, s, 1, 1, 2)
	wantTotal(t, s, 7)
	wantAnswered(t, ws[0], true)
}

// An event's counts found stale are summed after the read: the parent
// changed since the event, so shard 0 may no longer be the whole count.
func TestStaleEventSumIsSummedAgain(t *testing.T) {
	s, tr := viewed(t, 1)
	h := s.add(7, false)
	s.updated, s.numShards = s.clock.tick(), 4 // grown meanwhile
	s.shards[0] += 2                           // and written on another shard
	takeStep(t, tr, stepFold, h)
	wantCalls(t, s, 1, 1, 2)
	wantTotal(t, s, 9)
}

func TestStaleWriteThatCoveredEveryEventEndsTheFold(t *testing.T) {
	s, tr := viewed(t, 4)
	h := s.add(7, false)
	s.otherFold() // another instance folded after the event
	ws := takeStep(t, tr, stepFold, h)
	wantCalls(t, s, 1, 1, 1)
	wantAnswered(t, ws[0], true)
}

func TestFoldNeverBringsBackADeletedParent(t *testing.T) {
	s, tr := viewed(t, 4)
	h := s.add(7, false)
	s.exists = false // deleted since the view
	takeStep(t, tr, stepFold, h)
	wantCalls(t, s, 1, 1, 1)
	if s.exists {
		t.Error("the fold created the deleted parent again")
	}
}

func TestTooSoonLeavesTheWaitersToPlanAgain(t *testing.T) {
	s := newFakeStore(t)
	s.clock.advance(2 * s.window)
	s.writeErr = fold.ErrTooSoon // another instance folded meanwhile
	tr := s.tracker()
	view(tr, s, false)
	ws := takeStep(t, tr, stepFold, s.add(1, false))
	wantAnswered(t, ws[0], false)
	if !tr.counters["c"].known {
		t.Error("too soon forgot the view")
	}
}

// A fold that must not write (the shard field is wrong) writes nothing,
// answers the events it covers, and waits a window before the next. (A
// sum past int64 is no such fold: the folder skips the shards it cannot
// add, and writes the others' sum.)
func TestUnfoldableSumPausesAndAnswers(t *testing.T) {
	s := newFakeStore(t)
	s.numShards = 4
	s.clock.advance(2 * s.window)
	s.writeErr = fmt.Errorf("fold: fold c: %w", fold.ErrNoShardField)
	tr := s.tracker()
	view(tr, s, false)
	ws := takeStep(t, tr, stepFold, s.add(1, false))
	wantAnswered(t, ws[0], true)
	wantTotal(t, s, 0)
	if c := tr.counters["c"]; !c.pause.Equal(s.clock.now().Add(s.window)) {
		t.Errorf("pause until %v, want a window from now", c.pause)
	}
}

func TestRefreshFoldsOnlyADueParent(t *testing.T) {
	s := newFakeStore(t)
	s.numShards = 4
	tr := s.tracker()
	ws := takeStep(t, tr, stepRead, s.add(1, false)) // written just now: not due
	wantCalls(t, s, 1, 0, 0)
	wantAnswered(t, ws[0], false)
	s.clock.advance(s.window)
	tr.counters["c"].known = false
	takeStep(t, tr, stepRead)
	wantCalls(t, s, 2, 1, 1)
	wantAnswered(t, ws[0], true)
}

func TestProbeSumsAndWritesNothing(t *testing.T) {
	s := newFakeStore(t)
	tr := newTracker(s, s.clock.now, DefaultGrow, 0, nil)
	c := view(tr, s, true)
	takeStep(t, tr, stepProbe, s.add(1, false), s.add(1, false), s.add(1, false), s.add(1, false))
	wantCalls(t, s, 0, 1, 0)
	if c.base.At.IsZero() || c.base.Values[0] != 4 {
		t.Errorf("base = %+v, want the probe's sum, 4", c.base)
	}
}

func TestSettleDropsWaitersWhoseHandlerGaveUp(t *testing.T) {
	s := newFakeStore(t)
	tr := s.tracker()
	ctx, cancel := context.WithCancel(context.Background())
	tr.mu.Lock()
	c, gaveUp := tr.hold(ctx, s.add(1, false))
	_, waits := tr.hold(context.Background(), s.add(1, false))
	tr.mu.Unlock()
	cancel()
	tr.mu.Lock()
	tr.settle(c)
	tr.mu.Unlock()
	if len(c.waiting) != 1 || c.waiting[0] != waits {
		t.Errorf("waiting = %v, want only the waiter still waiting", c.waiting)
	}
	wantAnswered(t, gaveUp, false)
}

func TestCoveredByCountsTheWaitersAFoldAnswers(t *testing.T) {
	s := newFakeStore(t)
	tr := s.tracker()
	first := s.add(1, false)
	hold(tr, s.add(1, false))
	hold(tr, first)
	c, _ := hold(tr, s.add(1, false))
	c.p.Exists, c.p.AsOf = true, c.waiting[0].at // a fold as of the second waiter
	n, oldest := c.coveredBy()
	if n != 2 || !oldest.Equal(first.At) {
		t.Errorf("coveredBy = %d, %v; want 2, %v", n, oldest, first.At)
	}
}

// A tracker remembers at most rememberCounters counters: first it forgets
// those idle for a minute, then any idle one, never one at work.
func TestForgetDropsIdleCountersFirst(t *testing.T) {
	s := newFakeStore(t)
	tr := s.tracker()
	tr.mu.Lock()
	defer tr.mu.Unlock()
	for i := range rememberCounters {
		c := tr.counter(fmt.Sprint(i))
		c.running = i == 0
	}
	s.clock.advance(2 * time.Minute)
	tr.counter("recent")
	tr.counter("another") // forgets the idle ones older than a minute
	if _, ok := tr.counters["0"]; !ok || len(tr.counters) != 3 {
		t.Errorf("remembered %d counters (0: %v), want the running one and the two recent", len(tr.counters), ok)
	}
}

// A child's event is folded by aggregating its part alone: no sum of the
// shards, one write, and the waiter answered once its part's time covers
// it; a later child waits for a later fold.
func TestChildFoldAggregatesItsPartOnly(t *testing.T) {
	s, tr := viewed(t, 4)
	h := s.comment()
	ws := takeStep(t, tr, stepFold, h)
	wantCalls(t, s, 0, 0, 1)
	if s.partSums != 1 || s.part == nil || s.part.V["comments"] != int64(1) {
		t.Errorf("part sums %d, part %+v; want one aggregation of one comment", s.partSums, s.part)
	}
	wantAnswered(t, ws[0], true)
	c, w := hold(tr, s.comment())
	if w == nil {
		t.Fatal("a comment after the fold was taken as covered")
	}
	if !c.p.CoversChild("comments", "x", h.At) {
		t.Error("the fold's part does not cover the comment it folded")
	}
}

// A fold for shard events and a child's together sums the shards and
// aggregates the part, in one write.
func TestCountsAndChildFoldTogether(t *testing.T) {
	s, tr := viewed(t, 4)
	ws := takeStep(t, tr, stepFold, s.add(3, false), s.comment())
	wantCalls(t, s, 0, 1, 1)
	wantTotal(t, s, 3)
	if s.partSums != 1 || s.part == nil {
		t.Errorf("part sums %d, part %+v; want the part aggregated in the same fold", s.partSums, s.part)
	}
	wantAnswered(t, ws[0], true)
	wantAnswered(t, ws[1], true)
}

// An event of a shard of an earlier life than the document's is answered
// only once what that life took since the document's began is moved into
// it, and a fold then covers it; the document's own events need no move.
func TestStrayWaitsForItsMove(t *testing.T) {
	s, tr := viewed(t, 1)
	tr.mu.Lock()
	tr.counters["c"].p.Life = "1700000000000002"
	tr.mu.Unlock()
	h := s.add(5, false)
	h.Life = "1700000000000001"
	own := s.add(1, false)
	own.Life = "1700000000000002"
	ws := takeStep(t, tr, stepStrays, h, own)
	wantAnswered(t, ws[0], false)
	if want := []string{h.Life + "@" + h.At.Format(time.RFC3339Nano)}; !slices.Equal(s.moves, want) {
		t.Errorf("moves = %v, want %v", s.moves, want)
	}
	takeStep(t, tr, stepFold)
	wantAnswered(t, ws[0], true)
	wantAnswered(t, ws[1], true)
	if len(s.moves) != 1 {
		t.Errorf("moves = %v, want the one", s.moves)
	}
}
