package adder

import (
	"math"
	"sync"
	"time"
)

// Group commit. Increments of one counter that reach an Adder while a
// write of that counter is in flight wait, and go together in the next
// write: one shard write, and so one Rollup event, for all of them. The
// first of them writes it, as soon as the write in flight has committed;
// each is answered only after the write that holds it, with that write's
// commit time and error, so an answer is as true as a lone write's:
// counted at that time, not written, or its outcome unknown. A counter
// with no write in flight is written at once: a quiet counter waits for
// nothing.

// batch is the increments of one counter that one write adds.
type batch struct {
	by   map[string]int64 // amount by shard field
	n    int              // increments it holds
	turn chan struct{}    // closed when it may be written: the write before it is done
	done chan struct{}    // closed when it is written, or failed

	// What its write did, set before done is closed.
	shard     int
	committed time.Time
	err       error
}

func newBatch() *batch {
	return &batch{by: map[string]int64{}, turn: make(chan struct{}), done: make(chan struct{})}
}

// group is what an Adder knows of one counter's writes.
type group struct {
	busy bool   // a write of the counter is in flight
	next *batch // the increments that came while it was
}

// groups holds a group for each counter with a write in flight.
type groups struct {
	mu sync.Mutex
	m  map[string]*group
}

// join adds an increment of by to the shard field of counter id to the
// batch it goes in, and says whether it is the batch's first, which
// writes it once its turn comes. A counter with no write in flight gets a
// batch of its own whose turn has come. An increment that would take the
// waiting batch's amount past int64 joins none (nil): it is written on
// its own.
func (gs *groups) join(id, field string, by int64) (b *batch, first bool) {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	if gs.m == nil {
		gs.m = map[string]*group{}
	}
	g := gs.m[id]
	switch {
	case g == nil || !g.busy:
		g = &group{busy: true}
		gs.m[id] = g
		b, first = newBatch(), true
		close(b.turn)
	case g.next == nil:
		g.next = newBatch()
		b, first = g.next, true
	case overflows(g.next.by[field], by):
		return nil, false
	default:
		b = g.next
	}
	b.by[field] += by
	b.n++
	return b, first
}

// release ends the write of counter id: the batch that waited for it, if
// any, takes its turn (and the counter stays busy with it); else the
// counter has no write in flight.
func (gs *groups) release(id string) {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	g := gs.m[id]
	if g.next != nil {
		next := g.next
		g.next = nil
		close(next.turn)
		return
	}
	delete(gs.m, id)
}

// overflows reports whether a+b is past int64.
func overflows(a, b int64) bool {
	return b > 0 && a > math.MaxInt64-b || b < 0 && a < math.MinInt64-b
}
