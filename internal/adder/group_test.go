package adder

import (
	"math"
	"testing"
)

// TestGroupsBatchWhatComesInFlight: an increment of a counter with no
// write in flight is written at once, on its own; those that come while
// one is in flight wait together for the next write, whose first writes
// it when the write before is done; an increment too big to join waits
// for nothing.
func TestGroupsBatchWhatComesInFlight(t *testing.T) {
	var gs groups
	lone, first := gs.join("likes", "count", 1)
	if !first || !closed(lone.turn) {
		t.Fatal("an increment of an idle counter waited")
	}
	next, first := gs.join("likes", "count", 2)
	if !first || closed(next.turn) || next == lone {
		t.Fatal("an increment while a write is in flight did not start the next batch")
	}
	if again, first := gs.join("likes", "count", 3); first || again != next {
		t.Fatal("a third increment did not join the waiting batch")
	}
	if other, first := gs.join("views", "count", 1); !first || !closed(other.turn) {
		t.Fatal("another counter's increment waited for this one's write")
	}
	if big, _ := gs.join("likes", "count", math.MaxInt64); big != nil {
		t.Fatal("an increment that overflows the batch joined it")
	}
	if next.by["count"] != 5 || next.n != 2 {
		t.Fatalf("the batch holds %v in %d increments; want 5 in 2", next.by, next.n)
	}
	gs.release("likes")
	if !closed(next.turn) {
		t.Fatal("the waiting batch did not take its turn when the write before it ended")
	}
	if b, first := gs.join("likes", "count", 1); !first || closed(b.turn) {
		t.Fatal("an increment while the batch is written did not wait for the next write")
	}
	gs.release("likes")
	gs.release("likes")
	gs.release("views")
	if len(gs.m) != 0 {
		t.Fatalf("idle counters are still held: %v", gs.m)
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
