package adder

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
)

// TestGroupsBatchWhatComesInFlight: an increment of a counter with no
// write in flight is written at once, on its own; those that come while
// one is in flight wait together for the next write, whose first writes
// it when the write before is done (and minGap has passed since it
// began); an increment too big to join waits for nothing; a counter not
// written for minGap is forgotten.
func TestGroupsBatchWhatComesInFlight(t *testing.T) {
	var gs groups
	lone, first := gs.join("likes", "count", 1, nil)
	if !first || !closed(lone.turn) {
		t.Fatal("an increment of an idle counter waited")
	}
	next, first := gs.join("likes", "count", 2, nil)
	if !first || closed(next.turn) || next == lone {
		t.Fatal("an increment while a write is in flight did not start the next batch")
	}
	if again, first := gs.join("likes", "count", 3, nil); first || again != next {
		t.Fatal("a third increment did not join the waiting batch")
	}
	if other, first := gs.join("views", "count", 1, nil); !first || !closed(other.turn) {
		t.Fatal("another counter's increment waited for this one's write")
	}
	if big, _ := gs.join("likes", "count", math.MaxInt64, nil); big != nil {
		t.Fatal("an increment that overflows the batch joined it")
	}
	if next.by["count"] != 5 || next.n != 2 {
		t.Fatalf("the batch holds %v in %d increments; want 5 in 2", next.by, next.n)
	}
	gs.release("likes", time.Millisecond)
	gs.wait("likes", next) // the write before it is done: it is written within minGap of that write's start
	if !closed(next.turn) || gs.m["likes"].flying != 1 {
		t.Fatal("the waiting batch did not take its turn when the write before it ended")
	}
	b, first := gs.join("likes", "count", 1, nil)
	if !first || closed(b.turn) {
		t.Fatal("an increment while the batch is written did not wait for the next write")
	}
	gs.release("likes", time.Millisecond)
	gs.wait("likes", b)
	gs.release("likes", time.Millisecond)
	gs.release("views", time.Millisecond)
	for {
		gs.mu.Lock()
		n := len(gs.m)
		gs.mu.Unlock()
		if n == 0 {
			break
		}
		time.Sleep(minGap) // idle counters are forgotten minGap after their last write
	}
}

// TestWritesOfACounterAreMinGapApart: an increment of a counter whose
// last write began less than minGap ago waits, though no write is in
// flight, and is written once minGap has passed: a busy counter is
// written at most once per minGap by an Adder.
func TestWritesOfACounterAreMinGapApart(t *testing.T) {
	var gs groups
	began := time.Now() // at or before the write's start
	lone, _ := gs.join("likes", "count", 1, nil)
	gs.release("likes", 0)
	next, first := gs.join("likes", "count", 1, nil)
	if time.Since(began) < minGap && (!first || closed(next.turn) || next == lone) {
		t.Fatal("an increment within minGap of the last write was written at once")
	}
	gs.wait("likes", next)
	if gap := time.Since(began); gap < minGap {
		t.Fatalf("the next write began %v after the last; want %v at least", gap, minGap)
	}
}

// TestBatchGoesBesideASlowWrite: a batch waits for the write in flight
// only as long as writes usually take (twice, at least minPatience); a
// write that takes longer, here one that never ends, has the batch
// written beside it, and the next increments wait for either.
func TestBatchGoesBesideASlowWrite(t *testing.T) {
	var gs groups
	gs.join("likes", "count", 1, nil) // in flight, and never released
	next, _ := gs.join("likes", "count", 1, nil)
	gs.wait("likes", next)
	if g := gs.m["likes"]; g.flying != 2 || g.next != nil {
		t.Fatalf("after the wait: %d writes in flight, batch waiting %v; want 2 and none", g.flying, g.next != nil)
	}
	after, first := gs.join("likes", "count", 1, nil)
	if !first || closed(after.turn) {
		t.Fatal("an increment while two writes are in flight did not wait")
	}
	gs.release("likes", time.Millisecond)
	gs.wait("likes", after)
	if !closed(after.turn) {
		t.Fatal("the batch did not take its turn when one of the writes before it ended")
	}
}

func closed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// TestBatchedWaitersKeepTheirOwnTime: an increment waiting in a batch
// that another's request writes is answered when its own context ends,
// with an outcome unknown (the write may yet commit), and the write goes
// on for the others.
func TestBatchedWaitersKeepTheirOwnTime(t *testing.T) {
	a := &Adder{}
	a.groups.typical = time.Hour // writes usually slow: the batch waits for the held write, never goes beside it
	hold := make(chan struct{})
	slow := func(context.Context, []any, map[string]int64) (int, time.Time, error) {
		<-hold
		return 0, time.Now(), nil
	}
	first := make(chan error, 1)
	go func() { _, _, err := a.Batched(context.Background(), "likes", "count", 1, nil, slow); first <- err }()
	waitFlying(t, &a.groups, "likes")
	second := make(chan error, 1)
	go func() { _, _, err := a.Batched(context.Background(), "likes", "count", 1, nil, slow); second <- err }()
	waitNext(t, &a.groups, "likes")
	ctx, cancel := context.WithCancel(context.Background())
	third := make(chan error, 1)
	go func() { _, _, err := a.Batched(ctx, "likes", "count", 1, nil, slow); third <- err }()
	waitJoined(t, &a.groups, "likes", 2)
	cancel()
	if err := <-third; !errors.Is(err, core.ErrOutcomeUnknown) {
		t.Errorf("a waiter whose context ended: %v; want its outcome unknown", err)
	}
	close(hold)
	if err := <-first; err != nil {
		t.Errorf("the first write: %v", err)
	}
	if err := <-second; err != nil {
		t.Errorf("the batch's write, after a waiter left: %v", err)
	}
}

// TestBatchedReleasesOnPanic: a write that panics still answers its
// batch's waiters (outcome unknown) and lets the counter's next batch
// take its turn; the panic goes on up its own caller.
func TestBatchedReleasesOnPanic(t *testing.T) {
	a := &Adder{}
	a.groups.typical = time.Hour // the next batch waits for the panicking write, never goes beside it
	hold := make(chan struct{})
	boom := func(context.Context, []any, map[string]int64) (int, time.Time, error) {
		<-hold
		panic("boom")
	}
	panicked := make(chan any, 1)
	go func() {
		defer func() { panicked <- recover() }()
		a.Batched(context.Background(), "likes", "count", 1, nil, boom)
	}()
	waitFlying(t, &a.groups, "likes")
	next := make(chan error, 1)
	go func() {
		_, _, err := a.Batched(context.Background(), "likes", "count", 1, nil, func(context.Context, []any, map[string]int64) (int, time.Time, error) {
			return 0, time.Now(), nil
		})
		next <- err
	}()
	waitNext(t, &a.groups, "likes")
	close(hold)
	if r := <-panicked; r != "boom" {
		t.Errorf("the panic reached its caller as %v", r)
	}
	if err := <-next; err != nil {
		t.Errorf("the next batch after a panic: %v; want it written", err)
	}
}

// waitFlying waits until counter id has a write in flight.
func waitFlying(t *testing.T, gs *groups, id string) {
	t.Helper()
	waitGroup(t, gs, id, func(g *group) bool { return g.flying > 0 })
}

// waitNext waits until a batch of counter id waits for the write in flight.
func waitNext(t *testing.T, gs *groups, id string) {
	t.Helper()
	waitGroup(t, gs, id, func(g *group) bool { return g.next != nil })
}

// waitJoined waits until counter id's waiting batch holds n increments.
func waitJoined(t *testing.T, gs *groups, id string, n int) {
	t.Helper()
	waitGroup(t, gs, id, func(g *group) bool { return g.next != nil && g.next.n == n })
}

// waitGroup waits until ok holds of counter id's group, for at most
// emulatortest.Liveness (a liveness bound: a state that never comes fails
// the test, and says what the group was).
func waitGroup(t *testing.T, gs *groups, id string, ok func(*group) bool) {
	t.Helper()
	for deadline := time.Now().Add(emulatortest.Liveness); ; time.Sleep(time.Millisecond) {
		gs.mu.Lock()
		g := gs.m[id]
		done, state := g != nil && ok(g), fmt.Sprintf("%+v", g)
		gs.mu.Unlock()
		if done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("counter %s's group never came to the state waited for: %s", id, state)
		}
	}
}
