package adder

import (
	"math"
	"testing"
	"time"
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
