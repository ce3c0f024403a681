package adder

import (
	"math"
	"sync"
	"time"
)

// Group commit. Increments of one counter that reach an Adder while a
// write of that counter is in flight, or within minGap of the last one's
// start, wait, and go together in the next write: one shard write, and so
// one Rollup event, for all of them. The first of them writes it, as soon
// as the write in flight has committed and minGap has passed; each is
// answered only after the write that holds it, with that write's commit
// time and error, so an answer is as true as a lone write's: counted at
// that time, not written, or its outcome unknown. A counter this Adder
// has not written for minGap is written at once: a quiet counter waits
// for nothing. Nor does a batch wait behind a slow write: once the write
// in flight is older than twice what this Adder's writes usually take,
// the batch is written beside it, so an increment's wait is bounded by
// what a write usually takes, not by the slowest one.

// minGap is the least time between the starts of two writes of one
// counter by one Adder, unless a write is slow: at most 100 writes a
// second, however many increments come, for 10 ms of wait at most for an
// increment of a counter written that often. Each write brings a Rollup
// event and request, so this gap is most of what a hot counter's
// increment costs: at 500 a second, 5 ms made 0.34 to 0.36 writes an
// increment and $0.99 to $1.01 a million all in; 10 ms makes about 0.19
// and $0.77, for 3 ms more of median wait (docs/bench.md).
const minGap = 10 * time.Millisecond

// minPatience is the least a batch waits for the write in flight.
const minPatience = minGap

// batch is the increments of one counter that one write adds.
type batch struct {
	by    map[string]int64 // amount by shard field
	n     int              // increments it holds
	items []any            // what each increment carries for the write (Batched); nil for a plain one
	turn  chan struct{}    // closed when it may be written: the write before it is done, or slow
	wake  chan struct{}    // its first waits anew: the write before it is done, not minGap ago
	done  chan struct{}    // closed when it is written, or failed

	// What its write did, set before done is closed.
	shard     int
	committed time.Time
	err       error
}

func newBatch() *batch {
	return &batch{by: map[string]int64{}, turn: make(chan struct{}), wake: make(chan struct{}, 1), done: make(chan struct{})}
}

// group is what an Adder knows of one counter's writes.
type group struct {
	flying int       // writes of the counter in flight
	since  time.Time // when the latest of them began
	next   *batch    // the increments that came meanwhile
}

// groups holds a group for each counter written within minGap or with a
// write in flight, and how long writes usually take.
type groups struct {
	mu      sync.Mutex
	m       map[string]*group
	typical time.Duration // a moving average of the writes' times
}

// join adds an increment of by to the shard field of counter id to the
// batch it goes in, and says whether it is the batch's first, which
// writes it once its turn comes (wait). A counter with no write in flight
// and none begun within minGap gets a batch of its own whose turn has
// come. An increment that would take the waiting batch's amount past
// int64 joins none (nil): it is written on its own.
func (gs *groups) join(id, field string, by int64, item any) (b *batch, first bool) {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	if gs.m == nil {
		gs.m = map[string]*group{}
	}
	g := gs.m[id]
	if g == nil {
		g = &group{}
		gs.m[id] = g
	}
	switch {
	case g.next == nil && g.idle():
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
	if item != nil { // a plain increment carries nothing
		b.items = append(b.items, item)
	}
	return b, first
}

// idle reports whether g has no write in flight, and none begun within
// minGap. gs.mu is held.
func (g *group) idle() bool { return g.flying == 0 && time.Since(g.since) >= minGap }

// take makes b a write in flight of g. gs.mu is held.
func (g *group) take(b *batch) {
	g.flying++
	g.since = time.Now()
	close(b.turn)
}

// wait returns when b, the batch waiting for counter id's writes, may be
// written: the write in flight is done and minGap has passed since it
// began, or it has been in flight longer than patience, and b goes beside
// it.
func (gs *groups) wait(id string, b *batch) {
	for {
		gs.mu.Lock()
		g := gs.m[id]
		if g.next != b { // taken already
			gs.mu.Unlock()
			<-b.turn
			return
		}
		until := g.since.Add(minGap)
		if g.flying > 0 {
			until = g.since.Add(gs.patience())
		}
		left := time.Until(until)
		if left <= 0 {
			g.next = nil
			g.take(b)
			gs.mu.Unlock()
			return
		}
		gs.mu.Unlock()
		t := time.NewTimer(left)
		select {
		case <-b.turn:
			t.Stop()
			return
		case <-b.wake:
		case <-t.C:
		}
		t.Stop()
	}
}

// patience is how long a batch waits for the write in flight before it
// is written beside it: twice what a write usually takes. gs.mu is held.
func (gs *groups) patience() time.Duration { return max(minPatience, 2*gs.typical) }

// release ends a write of counter id that took took: the batch that
// waited for it, if any, takes its turn, or, if the write began less than
// minGap ago, is woken to wait for the rest of it. A counter left with no
// write is forgotten once minGap has passed.
func (gs *groups) release(id string, took time.Duration) {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	gs.typical += (took - gs.typical) / 8
	g := gs.m[id]
	g.flying--
	switch {
	case g.next != nil && g.idle():
		next := g.next
		g.next = nil
		g.take(next)
	case g.next != nil:
		select {
		case g.next.wake <- struct{}{}:
		default:
		}
	case g.flying == 0:
		time.AfterFunc(minGap, func() { gs.forget(id, g) })
	}
}

// forget drops g, counter id's group, if it is still idle.
func (gs *groups) forget(id string, g *group) {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	if gs.m[id] == g && g.next == nil && g.idle() {
		delete(gs.m, id)
	}
}

// overflows reports whether a+b is past int64.
func overflows(a, b int64) bool {
	return b > 0 && a > math.MaxInt64-b || b < 0 && a < math.MinInt64-b
}
