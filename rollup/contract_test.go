package rollup

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/core/aggregate"
	"github.com/tallycounters/tally/internal/core/calendar"
	"github.com/tallycounters/tally/internal/fold"
)

// The tracker's tests run on fakeStore; the product runs on
// fold.Folder. storeContract is the one table of cases both must
// answer alike, so that the two cannot drift: each case runs against the
// fake (TestStoreContractFake, in the quick tier) and against the folder
// on the emulator (TestStoreContractFolder).

// contractStore is a store under the contract, on one counter with one
// shard and no parent yet (storeContract), or on one counted document of
// the app, just created, with a count and a count of its comments
// (docsContract).
type contractStore struct {
	s  store
	id string
	// add adds by to the shard, as an increment does.
	add func(by int64)
	// pass lets more than the store's window pass since its last write.
	pass func()
	// comment adds a child to the document's comments (docsContract).
	comment func()
	// now is the store's time; until waits, or moves the fake clock,
	// until it is t (docsContract).
	now   func() time.Time
	until func(t time.Time)
}

// contractCase is a sequence of calls on a store, and what it must answer.
type contractCase struct {
	name   string
	window time.Duration
	run    func(t *testing.T, c contractStore) (fold.Outcome, error)
	wrote  bool
	err    error // matched with errors.Is; nil: none
	total  int64 // the stored first count after it
}

// read reads the parent, sum sums the shards of life, and write writes
// the sum on the parent read, as the steps of a tracker's fold.
func (c contractStore) read(t *testing.T) core.Parent {
	t.Helper()
	p, err := c.s.Read(context.Background(), c.id)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func (c contractStore) sum(t *testing.T, life string) fold.Sum {
	t.Helper()
	sum, err := c.s.SumNow(context.Background(), c.id, life, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

func (c contractStore) write(p core.Parent, sum fold.Sum) (fold.Outcome, error) {
	out, _, err := c.s.Write(context.Background(), c.id, p, sum, 0)
	return out, err
}

// foldOnce reads the parent, sums the shards and, past the window, writes.
func foldOnce(t *testing.T, c contractStore) (fold.Outcome, error) {
	t.Helper()
	p := c.read(t)
	sum := c.sum(t, p.Life)
	c.pass()
	return c.write(p, sum)
}

var storeContract = []contractCase{
	{name: "a first fold makes the parent with the sum", window: time.Millisecond, wrote: true, total: 3,
		run: func(t *testing.T, c contractStore) (fold.Outcome, error) {
			c.add(3)
			return foldOnce(t, c)
		}},
	{name: "a later fold writes the new sum", window: time.Millisecond, wrote: true, total: 5,
		run: func(t *testing.T, c contractStore) (fold.Outcome, error) {
			c.add(3)
			mustWrite(t, c)
			c.add(2)
			return foldOnce(t, c)
		}},
	{name: "a fold on a parent read before another's write is stale", window: time.Millisecond, err: fold.ErrStale, total: 3,
		run: func(t *testing.T, c contractStore) (fold.Outcome, error) {
			c.add(1)
			mustWrite(t, c)
			c.add(2)
			old := c.read(t)
			sum := c.sum(t, old.Life)
			mustWrite(t, c) // another instance's fold
			c.pass()
			return c.write(old, sum)
		}},
	{name: "within the spacing of the last write, a fold is refused", window: time.Hour, err: fold.ErrTooSoon, total: 1,
		run: func(t *testing.T, c contractStore) (fold.Outcome, error) {
			c.add(1)
			mustWrite(t, c)
			c.add(1)
			p := c.read(t)
			return c.write(p, c.sum(t, p.Life))
		}},
	{name: "a sum no later than the stored one writes nothing", window: time.Millisecond, total: 2,
		run: func(t *testing.T, c contractStore) (fold.Outcome, error) {
			c.add(1)
			early := c.sum(t, c.read(t).Life)
			c.pass()
			c.add(1)
			mustWrite(t, c)
			now := c.read(t)
			c.pass()
			return c.write(now, early)
		}},
	{name: "a sum of another life's shards is stale", window: time.Millisecond, err: fold.ErrStale, total: 1,
		run: func(t *testing.T, c contractStore) (fold.Outcome, error) {
			c.add(1)
			mustWrite(t, c)
			p := c.read(t)
			sum := c.sum(t, "another-life")
			c.pass()
			return c.write(p, sum)
		}},
}

// The counted document of docsContract, and its aggregated collection.
const (
	docsCounts = "posts:likes,comments=count(comments),likes_m=likes per minute"
	comments   = "comments"
)

// gather reads the parent, sums its shards, and gathers the one part of
// its comments: a fold of a child's write.
func gather(t *testing.T, c contractStore) (core.Parent, fold.Sum) {
	t.Helper()
	p := c.read(t)
	sum := c.sum(t, p.Life)
	err := c.s.Gather(context.Background(), c.id, p, &sum, []aggregate.Child{{Source: comments, ID: "c", At: sum.At}}, sum.At, sum.At)
	if err != nil {
		t.Fatal(err)
	}
	return p, sum
}

// foldWindows reads the parent, sums its shards, reads the counts at the
// starts of buckets the fold crosses, and, past the window, writes: a
// fold of a shard's write on a document with windows.
func foldWindows(t *testing.T, c contractStore) (fold.Outcome, error) {
	t.Helper()
	p := c.read(t)
	sum := c.sum(t, p.Life)
	if err := c.s.Gather(context.Background(), c.id, p, &sum, nil, sum.At, c.now()); err != nil {
		t.Fatal(err)
	}
	c.pass()
	return c.write(p, sum)
}

// docsContract holds the stores alike on counts on documents: the parts
// of an aggregated collection, refolded and written with the counts, a
// creation's zeros, and a window moved across the start of a bucket.
var docsContract = []contractCase{
	{name: "a fold across a bucket's start reads the count there and moves the window on", window: time.Millisecond, wrote: true, total: 4,
		run: func(t *testing.T, c contractStore) (fold.Outcome, error) {
			if next := c.now().Truncate(time.Minute).Add(time.Minute); next.Sub(c.now()) < 10*time.Second {
				c.until(next) // the first fold in the minute of the first increment
			}
			c.add(1)
			if out, err := foldWindows(t, c); err != nil || !out.Wrote {
				t.Fatalf("the first fold: wrote %v, %v", out.Wrote, err)
			}
			b0 := c.read(t).Windows["likes_m"].Bucket
			c.add(1) // in the same minute, folded by no one: only a read at the minute's end counts it there
			c.until(b0.Add(time.Minute))
			c.add(2)
			out, err := foldWindows(t, c)
			st := c.read(t).Windows["likes_m"]
			var all int64
			for _, n := range st.Series {
				all += n
			}
			if got := st.Series[calendar.BucketKey(b0)]; got != 2 || all+4-st.Base != 4 || !st.Bucket.After(b0) {
				t.Errorf("the window after the fold: bucket %v, base %d, series %v; want the minute of %v closed at 2, and 4 in all",
					st.Bucket, st.Base, st.Series, b0)
			}
			return out, err
		}},
	{name: "a child's part is refolded and written with the counts", window: time.Millisecond, wrote: true, total: 1,
		run: func(t *testing.T, c contractStore) (fold.Outcome, error) {
			c.add(1)
			c.comment()
			c.comment()
			p, sum := gather(t, c)
			c.pass()
			out, err := c.write(p, sum)
			if got := c.read(t).Parts[comments][aggregate.PartKey("")].N; got != 2 {
				t.Errorf("the stored part holds %d children, want 2", got)
			}
			return out, err
		}},
	{name: "a part refolded no later than the stored one writes nothing", window: time.Millisecond, total: 0,
		run: func(t *testing.T, c contractStore) (fold.Outcome, error) {
			c.comment()
			_, early := gather(t, c)
			early.Values = nil // a child's fold only
			c.pass()
			c.comment()
			p, sum := gather(t, c)
			c.pass()
			if out, err := c.write(p, sum); err != nil || !out.Wrote {
				t.Fatalf("the later fold: wrote %v, %v", out.Wrote, err)
			}
			now := c.read(t)
			c.pass()
			out, err := c.write(now, early)
			if got := c.read(t).Parts[comments][aggregate.PartKey("")].N; got != 2 {
				t.Errorf("the stored part holds %d children, want the later fold's 2", got)
			}
			return out, err
		}},
	{name: "a creation's zeros are written as of it, with no sum", window: time.Millisecond, wrote: true, total: 0,
		run: func(t *testing.T, c contractStore) (fold.Outcome, error) {
			p := c.read(t)
			if !p.Exists || !p.AsOf.IsZero() {
				t.Fatalf("the document just created: exists %v, as of %v", p.Exists, p.AsOf)
			}
			zero := fold.Sum{At: p.Updated, Life: p.Life, Values: []int64{0}, Shards: []int64{0}}
			out, err := c.write(p, zero)
			if got := c.read(t).AsOf; !got.Equal(p.Updated) {
				t.Errorf("as of %v, want the creation's %v", got, p.Updated)
			}
			return out, err
		}},
}

// mustWrite folds and wants the fold written.
func mustWrite(t *testing.T, c contractStore) {
	t.Helper()
	if out, err := foldOnce(t, c); err != nil || !out.Wrote {
		t.Fatalf("a fold to set up the case: wrote %v, %v", out.Wrote, err)
	}
}

// runContract runs every case of cases on the stores open makes, one per
// case.
func runContract(t *testing.T, cases []contractCase, open func(t *testing.T, window time.Duration) contractStore) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each case on a store of its own; one waits for a minute's end
			c := open(t, tc.window)
			out, err := tc.run(t, c)
			if out.Wrote != tc.wrote || !errors.Is(err, tc.err) || (tc.err == nil && err != nil) {
				t.Errorf("wrote %v, error %v; want wrote %v, error %v", out.Wrote, err, tc.wrote, tc.err)
			}
			p, rerr := c.s.Read(context.Background(), c.id)
			if rerr != nil || len(p.Totals) == 0 || p.Totals[0] != tc.total {
				t.Errorf("the stored total is %v (%v), want %d", p.Totals, rerr, tc.total)
			}
		})
	}
}

func TestStoreContractFake(t *testing.T) {
	runContract(t, storeContract, func(t *testing.T, window time.Duration) contractStore {
		s := newFakeStore(t)
		s.exists, s.updated, s.written, s.window = false, time.Time{}, time.Time{}, window
		return contractStore{s: s, id: "c",
			add:  func(by int64) { s.add(by, false) },
			pass: func() { s.clock.advance(2 * window) }}
	})
}

func TestStoreContractFakeOnDocuments(t *testing.T) {
	docs, err := core.ParseCounts(docsCounts)
	if err != nil {
		t.Fatal(err)
	}
	runContract(t, docsContract, func(t *testing.T, window time.Duration) contractStore {
		s := newFakeStore(t)
		s.layout.Docs, s.window = docs, window
		s.life, s.written = s.layout.LifeOf(s.updated), time.Time{} // just created: no fold yet
		return contractStore{s: s, id: "posts/p",
			add:     func(by int64) { s.add(by, false) },
			pass:    func() { s.clock.advance(2 * window) },
			comment: func() { s.comment() },
			now:     s.clock.now,
			until: func(at time.Time) {
				if d := at.Sub(s.clock.now()); d > 0 {
					s.clock.advance(d)
				}
			}}
	})
}
