package increment

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/internal/adder"
	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/testkit/layouttest"
)

// TestBusyInstanceSeesGrowth: two Increment instances have a new counter
// (one shard) cached for an hour; it grows to 64 shards, as a fold grows
// a busy one. The instance that goes on writing it reads it again, in the
// background, once it has written it adder.RefreshWrites times and
// adder.RefreshAge has passed, and spreads its writes over the new shards
// from then on; the one that writes it once more does not read it at all.
func TestBusyInstanceSeesGrowth(t *testing.T) {
	c, ops := emulatortest.CountingClient(t)
	var now atomic.Int64
	now.Store(time.Now().UnixNano())
	busy := New(c, Config{Layout: layouttest.Public(core.Default()), AutoCreate: true, CacheTTL: time.Hour, Now: func() time.Time { return time.Unix(0, now.Load()) }})
	quiet, _ := newHandler(t, Config{AutoCreate: true, CacheTTL: time.Hour})
	id := emulatortest.ID(t)
	incr := func(h *Handler) int { t.Helper(); return step(t, h, id) }
	incr(busy) // makes the counter, on one shard
	incr(quiet)
	if _, err := core.Default().Counter(c, id).Update(context.Background(), []firestore.Update{{Path: core.FieldNumShards, Value: 64}}); err != nil {
		t.Fatal(err)
	}
	reads := ops.Reads()
	for range adder.RefreshWrites {
		if n := incr(busy); n != 0 {
			t.Fatalf("an increment went to shard %d before the instance read the counter again", n)
		}
	}
	if got := ops.Reads() - reads; got != 0 {
		t.Errorf("%d reads within RefreshAge of the last; want none", got)
	}
	now.Add(int64(adder.RefreshAge))
	seen := map[int]bool{}
	for i := 0; i < 500 && len(seen) < 2; i++ {
		seen[incr(busy)] = true
	}
	if len(seen) < 2 {
		t.Errorf("500 increments after the counter grew, all on shard 0: the busy instance never read it again")
	}
	if got := ops.Reads() - reads; got != 1 {
		t.Errorf("the busy instance read the counter %d times; want once", got)
	}
	if n := incr(quiet); n != 0 {
		t.Errorf("the quiet instance wrote shard %d: it read the counter again within its cache's hour", n)
	}
}
