package rollup

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tallycounters/tally/core"
)

// The tracker's tests run on fakeStore; the product runs on
// core.Folder. storeContract is the one table of cases both must
// answer alike, so that the two cannot drift: each case runs against the
// fake (TestStoreContractFake, in the quick tier) and against the folder
// on the emulator (TestStoreContractFolder).

// contractStore is a store under the contract, on one counter with one
// shard and no parent yet.
type contractStore struct {
	s  store
	id string
	// add adds by to the shard, as an increment does.
	add func(by int64)
	// pass lets more than the store's window pass since its last write.
	pass func()
}

// contractCase is a sequence of calls on a store, and what it must answer.
type contractCase struct {
	name   string
	window time.Duration
	run    func(t *testing.T, c contractStore) (core.Outcome, error)
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

func (c contractStore) sum(t *testing.T, life string) core.Sum {
	t.Helper()
	sum, err := c.s.SumNow(context.Background(), c.id, life, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

func (c contractStore) write(p core.Parent, sum core.Sum) (core.Outcome, error) {
	out, _, err := c.s.Write(context.Background(), c.id, p, sum, 0)
	return out, err
}

// fold reads the parent, sums the shards and, past the window, writes.
func fold(t *testing.T, c contractStore) (core.Outcome, error) {
	t.Helper()
	p := c.read(t)
	sum := c.sum(t, p.Life)
	c.pass()
	return c.write(p, sum)
}

var storeContract = []contractCase{
	{name: "a first fold makes the parent with the sum", window: time.Millisecond, wrote: true, total: 3,
		run: func(t *testing.T, c contractStore) (core.Outcome, error) {
			c.add(3)
			return fold(t, c)
		}},
	{name: "a later fold writes the new sum", window: time.Millisecond, wrote: true, total: 5,
		run: func(t *testing.T, c contractStore) (core.Outcome, error) {
			c.add(3)
			mustWrite(t, c)
			c.add(2)
			return fold(t, c)
		}},
	{name: "a fold on a parent read before another's write is stale", window: time.Millisecond, err: core.ErrStale, total: 3,
		run: func(t *testing.T, c contractStore) (core.Outcome, error) {
			c.add(1)
			mustWrite(t, c)
			c.add(2)
			old := c.read(t)
			sum := c.sum(t, old.Life)
			mustWrite(t, c) // another instance's fold
			c.pass()
			return c.write(old, sum)
		}},
	{name: "within the window of the last write, a fold is refused", window: time.Hour, err: core.ErrTooSoon, total: 1,
		run: func(t *testing.T, c contractStore) (core.Outcome, error) {
			c.add(1)
			mustWrite(t, c)
			c.add(1)
			p := c.read(t)
			return c.write(p, c.sum(t, p.Life))
		}},
	{name: "a sum no later than the stored one writes nothing", window: time.Millisecond, total: 2,
		run: func(t *testing.T, c contractStore) (core.Outcome, error) {
			c.add(1)
			early := c.sum(t, c.read(t).Life)
			c.pass()
			c.add(1)
			mustWrite(t, c)
			now := c.read(t)
			c.pass()
			return c.write(now, early)
		}},
	{name: "a sum of another life's shards is stale", window: time.Millisecond, err: core.ErrStale, total: 1,
		run: func(t *testing.T, c contractStore) (core.Outcome, error) {
			c.add(1)
			mustWrite(t, c)
			p := c.read(t)
			sum := c.sum(t, "another-life")
			c.pass()
			return c.write(p, sum)
		}},
}

// mustWrite folds and wants the fold written.
func mustWrite(t *testing.T, c contractStore) {
	t.Helper()
	if out, err := fold(t, c); err != nil || !out.Wrote {
		t.Fatalf("a fold to set up the case: wrote %v, %v", out.Wrote, err)
	}
}

// runContract runs every case on the stores open makes, one per case.
func runContract(t *testing.T, open func(t *testing.T, window time.Duration) contractStore) {
	for _, tc := range storeContract {
		t.Run(tc.name, func(t *testing.T) {
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
	runContract(t, func(t *testing.T, window time.Duration) contractStore {
		s := newFakeStore(t)
		s.exists, s.updated, s.written, s.window = false, time.Time{}, time.Time{}, window
		return contractStore{s: s, id: "c",
			add:  func(by int64) { s.add(by, false) },
			pass: func() { s.clock.advance(2 * window) }}
	})
}
