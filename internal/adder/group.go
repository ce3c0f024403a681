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
// nothing. Nor does a batch wait behind a slow write: once the write in
// flight is older than twice what this Adder's writes usually take, the
// batch is written beside it, so an increment's wait is bounded by what a
// write usually takes, not by the slowest one.

// minPatience is the least a batch waits for the write in flight: about
// what a write to the emulator takes, less than one to Firestore.
const minPatience = 5 * time.Millisecond

// batch is the increments of one counter that one write adds.
type batch struct {
	by   map[string]int64 // amount by shard field
	n    int              // increments it holds
	turn chan struct{}    // closed when it may be written: the write before it is done, or slow
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
	flying int       // writes of the counter in flight
	since  time.Time // when the latest of them began
	next   *batch    // the increments that came meanwhile
}

// groups holds a group for each counter with a write in flight, and how
// long writes usually take.
type groups struct {
	mu      sync.Mutex
	m       map[string]*group
	typical time.Duration // a moving average of the writes' times
}

// join adds an increment of by to the shard field of counter id to the
// batch it goes in, and says whether it is the batch's first, which
// writes it once its turn comes (wait). A counter with no write in flight
// gets a batch of its own whose turn has come. An increment that would
// take the waiting batch's amount past int64 joins none (nil): it is
// written on its own.
func (gs *groups) join(id, field string, by int64) (b *batch, first bool) {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	if gs.m == nil {
		gs.m = map[string]*group{}
	}
	g := gs.m[id]
	switch {
	case g == nil:
		g = &group{}
		gs.m[id] = g
		fallthrough
	case g.flying == 0:
		b, first = newBatch(), true
		g.take(b)
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

// take makes b a write in flight of g. gs.mu is held.
func (g *group) take(b *batch) {
	g.flying++
	g.since = time.Now()
	close(b.turn)
}

// wait returns when b, the batch waiting for counter id's write in
// flight, may be written: that write is done, or it has been in flight
// longer than patience, and b goes beside it.
func (gs *groups) wait(id string, b *batch) {
	gs.mu.Lock()
	left := time.Until(gs.m[id].since.Add(gs.patience()))
	gs.mu.Unlock()
	if left > 0 {
		t := time.NewTimer(left)
		defer t.Stop()
		select {
		case <-b.turn:
			return
		case <-t.C:
		}
	}
	gs.mu.Lock()
	if g := gs.m[id]; g.next == b {
		g.next = nil
		g.take(b)
	}
	gs.mu.Unlock()
	<-b.turn
}

// patience is how long a batch waits for the write in flight before it
// is written beside it: twice what a write usually takes. gs.mu is held.
func (gs *groups) patience() time.Duration { return max(minPatience, 2*gs.typical) }

// release ends a write of counter id that took took: the batch that
// waited for it, if any, takes its turn; else, if no other is in flight,
// the counter is forgotten.
func (gs *groups) release(id string, took time.Duration) {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	gs.typical += (took - gs.typical) / 8
	g := gs.m[id]
	g.flying--
	switch {
	case g.next != nil:
		next := g.next
		g.next = nil
		g.take(next)
	case g.flying == 0:
		delete(gs.m, id)
	}
}

// overflows reports whether a+b is past int64.
func overflows(a, b int64) bool {
	return b > 0 && a > math.MaxInt64-b || b < 0 && a < math.MinInt64-b
}
