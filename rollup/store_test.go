package rollup

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/core/aggregate"
	"github.com/tallycounters/tally/internal/core/bytime"
	"github.com/tallycounters/tally/internal/fold"
)

// The tracker's decisions are tested here with no database: a fakeStore
// keeps one counter's parent, its shard sums (and their history, for
// reads at past instants), its windows and one part of its comments in
// memory, behaves as
// fold.Folder does (a write is a compare-and-set on the update time,
// no later than the window allows, and no older than the stored as_of),
// and counts the calls a fold makes. The local and the server clock are
// one fake clock, which only tests move. contract_test.go holds the fake
// and the folder to one table of cases.

// start is when every fake clock starts.
var start = time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// advance moves the clock on by d.
func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// tick moves the clock on by a microsecond, Firestore's precision, and
// returns the new time: the time of a write.
func (c *fakeClock) tick() time.Time {
	c.advance(time.Microsecond)
	return c.now()
}

// fakeStore is one counter "c" (in the guide layout unless told) as the
// server holds it.
type fakeStore struct {
	layout core.Layout
	window time.Duration
	clock  *fakeClock

	mu                  sync.Mutex
	exists              bool
	life                string
	updated, written    time.Time
	asOf                time.Time
	totals              []int64
	numShards           int
	shards              []int64 // the shards' sum of each count
	comments            int64   // children of the one aggregated collection, "comments", all in one part
	created             time.Time
	history             []shardsAt // the shards' sums after each add, oldest first
	windows             map[string]bytime.State
	next                time.Time // next_boundary
	part                *aggregate.Part
	sumErr, writeErr    error // returned by the next SumNow or Write, once
	reads, sums, writes int   // calls made; writes counts attempts
	partSums            int
	moves               []string    // MoveStrays's calls: life@after
	wrote               []time.Time // shard writes made by hand, for SumWrites
}

func newFakeStore(t *testing.T) *fakeStore {
	t.Helper()
	clock := &fakeClock{t: start}
	s := &fakeStore{layout: core.Default(), window: time.Second, clock: clock,
		exists: true, totals: []int64{0}, numShards: 1, shards: []int64{0}}
	s.updated, s.written = clock.tick(), clock.now()
	s.created = s.updated
	return s
}

// shardsAt is the shards' sums from an instant on.
type shardsAt struct {
	at     time.Time
	shards []int64
}

// tracker returns a tracker on s and its clock, growth off.
func (s *fakeStore) tracker() *tracker {
	return newTracker(s, s.clock.now, GrowPolicy{}, 0, nil)
}

func (s *fakeStore) Layout() core.Layout    { return s.layout }
func (s *fakeStore) Spacing() time.Duration { return s.window }

func (s *fakeStore) Read(_ context.Context, id string) (core.Parent, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reads++
	return s.parent(), nil
}

// parent is the parent as a read now gets it. s.mu is held.
func (s *fakeStore) parent() core.Parent {
	now := s.clock.now()
	p := core.Parent{Anchor: now, AnchorAt: now}
	if !s.exists {
		return p
	}
	p.Exists, p.Life, p.Updated, p.Written, p.AsOf = true, s.life, s.updated, s.written, s.asOf
	p.Totals, p.NumShards, p.OneSince = slices.Clone(s.totals), s.numShards, s.updated
	p.Windows, p.NextBoundary = s.windows, s.next
	if s.layout.OnDocs() {
		p.Born = s.created
	}
	if s.part != nil {
		p.Parts = map[string]aggregate.Parts{"comments": {aggregate.PartKey(""): *s.part}}
	}
	return p
}

// Gather reads the counts at the starts of buckets the fold crosses, as
// the folder does (fold.ReadBoundaries, from the history of the shards),
// and aggregates the one part of "comments" at partsAt, if asked.
func (s *fakeStore) Gather(ctx context.Context, id string, p core.Parent, sum *fold.Sum, children []aggregate.Child, partsAt, now time.Time) error {
	if err := fold.ReadBoundaries(ctx, s.layout, id, p, sum, now, s.countsAt); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(children) == 0 {
		return nil
	}
	s.partSums++
	part := aggregate.Part{At: partsAt, N: s.comments, V: map[string]any{"comments": s.comments}}
	sum.Parts = []aggregate.PartFold{{Source: "comments", Parts: aggregate.Parts{aggregate.PartKey(""): part}}}
	return nil
}

// countsAt is the shards' sums at the instant at, of the counts a window
// of w needs.
func (s *fakeStore) countsAt(_ context.Context, at time.Time, w bytime.Fold) ([]int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]int64, len(s.shards))
	for _, h := range s.history {
		if h.at.After(at) {
			break
		}
		for i := range out {
			if w.Windowed(i) {
				out[i] = h.shards[i]
			}
		}
	}
	return out, nil
}

// comment adds a child to "comments" and returns its event's hint.
func (s *fakeStore) comment() eventHint {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.comments++
	return eventHint{Counter: "c", Child: &aggregate.Child{Source: "comments", ID: "x"}, At: s.clock.tick()}
}

// SumWrites counts the adds made at or before at, and the writes set
// by hand (wrote) then.
func (s *fakeStore) SumWrites(_ context.Context, _, _ string, at time.Time) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var n int64
	for _, h := range s.history {
		if !h.at.After(at) {
			n++
		}
	}
	for _, w := range s.wrote {
		if !w.After(at) {
			n++
		}
	}
	return n, nil
}

// MoveStrays records the move asked for: of which earlier life, after
// which time.
func (s *fakeStore) MoveStrays(_ context.Context, _, from string, after time.Time) (map[string]int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.moves = append(s.moves, from+"@"+after.Format(time.RFC3339Nano))
	return nil, nil
}

func (s *fakeStore) SumNow(_ context.Context, _, life string, notBefore time.Time) (fold.Sum, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sums++
	if err := s.sumErr; err != nil {
		s.sumErr = nil
		return fold.Sum{}, err
	}
	at := s.clock.now()
	if at.Before(notBefore) {
		at = notBefore
	}
	ones := make([]int64, len(s.shards))
	for i := range ones {
		ones[i] = 1
	}
	return fold.Sum{At: at, Life: life, Values: slices.Clone(s.shards), Shards: ones}, nil
}

func (s *fakeStore) Write(_ context.Context, id string, p core.Parent, sum fold.Sum, grow int) (fold.Outcome, core.Parent, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writes++
	out := fold.Outcome{Counter: id, Before: p.Totals, Sum: sum, NumShards: p.NumShards}
	if err := s.writeErr; err != nil {
		s.writeErr = nil
		return out, p, err
	}
	counts := sum.Values != nil && (!p.Exists || p.AsOf.Before(sum.At))
	var part *aggregate.Part
	if len(sum.Parts) > 0 {
		if pt := sum.Parts[0].Parts[aggregate.PartKey("")]; s.part == nil || s.part.At.Before(pt.At) {
			part = &pt
		}
	}
	switch {
	case p.Exists && counts && sum.Life != p.Life:
		return out, p, fold.ErrStale
	case p.Exists && !counts && part == nil:
		return out, p, nil
	case p.Exists && sum.At.Before(p.Written.Add(s.window)) && p.Now(s.clock.now()).Before(p.Written.Add(s.window)):
		return out, p, fold.ErrTooSoon
	case p.Exists != s.exists || !p.Updated.Equal(s.updated):
		return out, p, fold.ErrStale
	}
	now := s.clock.tick()
	s.exists, s.updated, s.written = true, now, now
	if counts {
		s.asOf, s.totals = sum.At, slices.Clone(sum.Values)
		if len(s.layout.WindowsOf(id)) > 0 {
			_, s.windows, s.next, _ = fold.WindowFold(s.layout, id, p, sum).Move(sum.Values)
		}
	}
	if part != nil {
		s.part, out.Parts = part, 1
	}
	since := p.OneSince
	if grow > 0 {
		s.numShards, out.NumShards, out.Grew = grow, grow, true
	}
	if out.Grew || since.IsZero() {
		since = now
	}
	out.Wrote, out.Updated = true, now
	next := s.parent()
	next.OneSince = since
	return out, next, nil
}

// add adds by to the shards' first count, as an increment on shard 0
// does, and returns the hint of its event: the write's time and, on one
// shard, shard 0's count after it, with the parent's update time when
// seen is set.
func (s *fakeStore) add(by int64, seen bool) eventHint {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.shards[0] += by
	h := eventHint{Counter: "c", Life: s.life, At: s.clock.tick()}
	s.history = append(s.history, shardsAt{at: h.At, shards: slices.Clone(s.shards)})
	h.One = &core.OneShard{Values: slices.Clone(s.shards), Held: []bool{true}}
	if seen {
		h.One.Seen = s.updated
	}
	return h
}

// otherFold writes the parent as another instance's fold would, now.
func (s *fakeStore) otherFold() {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock.tick()
	s.updated, s.written, s.asOf, s.totals = now, now, now, slices.Clone(s.shards)
}

// calls says how many reads, sums and write attempts were made.
func (s *fakeStore) calls() [3]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return [3]int{s.reads, s.sums, s.writes}
}

// total is the stored first count.
func (s *fakeStore) total() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.totals[0]
}

// hold adds h to the tracker's waiters as Wait does, without running
// anything, and returns the counter and the waiter (nil if covered).
func hold(t *tracker, h eventHint) (*tracked, *waiter) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.hold(context.Background(), h)
}

// answered reports whether w was answered, and with what.
func answered(w *waiter) (bool, error) {
	select {
	case err := <-w.done:
		return true, err
	default:
		return false, nil
	}
}
