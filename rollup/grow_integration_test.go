package rollup

import (
	"context"

	"strings"
	"testing"
	"time"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/fold"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/tools/eventarc"
)

// growing is a policy that grows a counter past one write a second a
// shard, measured over 100 ms.
var growing = GrowPolicy{PerShard: 1, Max: 1000, Period: 100 * time.Millisecond}

// oneShard makes h's counter as Increment makes a new one: one shard.
func oneShard(h *history) {
	h.t.Helper()
	if _, err := h.layout.Counter(h.client, h.id).Set(context.Background(), map[string]any{core.FieldNumShards: 1, core.FieldTotal: 0}); err != nil {
		h.t.Fatal(err)
	}
}

// numShards is the counter's num_shards as stored.
func (h *history) numShards() int64 {
	h.t.Helper()
	n, _ := h.parent().Data()[core.FieldNumShards].(int64)
	return n
}

// forgedCount is an event for a write to shard 0 of h's counter, at, that
// says the shard holds count, which it does not.
func forgedCount(h *history, count int64, at time.Time) *eventarc.Doc {
	return eventarc.IntDoc(h.path(0), h.layout.ShardField, count, at)
}

// TestForgedCountsNeverGrow: events for shard 0 of a counter on one shard
// that claim counts it does not hold, many at once and long after its
// first fold, as forged ones would, never raise num_shards: growth comes
// from sums of the shards. The total a forged count may write (its event's
// count is the sum of a counter on one shard) is put right by the next
// true write, and by a reconcile.
func TestForgedCountsNeverGrow(t *testing.T) {
	t.Parallel()
	h := newHistory(t)
	oneShard(h)
	h.live = h.handler(Config{Grow: growing})
	h.incr(0, 1)
	time.Sleep(3 * growing.Period)
	c := h.concurrently(h.live)
	for i := range 3 * measureAt {
		c.deliver(eventarc.Written(emulatortest.Project, "(default)", h.last[0], forgedCount(h, 2_000_000+int64(i), time.Now().Add(-10*time.Millisecond))))
	}
	c.wait()
	if n := h.numShards(); n != 1 {
		t.Fatalf("num_shards = %d after forged counts; want 1", n)
	}
	h.incr(0, 1) // the next true write
	h.checkExact()
	if n := h.numShards(); n != 1 {
		t.Errorf("num_shards = %d; want 1", n)
	}
	if strings.Contains(h.logs.String(), "added shards") {
		t.Errorf("growth logged:\n%s", h.logs.String())
	}

	// A forged count, then a reconcile with no write in between.
	time.Sleep(2 * testWindow)
	h.deliver(h.live, eventarc.Written(emulatortest.Project, "(default)", h.last[0], forgedCount(h, 7_000_000, time.Now().Add(-time.Millisecond))))
	drift, err := fold.NewFolder(h.client, h.layout, testWindow).Reconcile(context.Background(), h.id)
	if err != nil {
		t.Fatal(err)
	}
	h.checkExact()
	if len(drift) != 1 || drift[0].Sum != 2 {
		t.Errorf("reconcile found %+v; want the sum 2", drift)
	}
}

// TestFutureCountNotTaken: an event dated ahead of the server's clock (as
// far as the decoder lets one be) is not taken at its word: the fold that
// covers it sums the shard, and the total stays the true one.
func TestFutureCountNotTaken(t *testing.T) {
	t.Parallel()
	h := newHistory(t)
	oneShard(h)
	h.live = h.handler(Config{})
	h.incr(0, 1)
	time.Sleep(2 * testWindow)
	h.deliver(h.live, eventarc.Written(emulatortest.Project, "(default)", h.last[0], forgedCount(h, 9_000_000, time.Now().Add(2*time.Second))))
	h.checkExact()
	if total, _ := h.parent().Data()[core.FieldTotal].(int64); total != 1 {
		t.Errorf("total = %d after an event dated 2 s ahead; want the shard's 1", total)
	}
}

// TestBurstGrowsFromSums: a counter on one shard written a few hundred
// times in a row, each event delivered as it comes and concurrently, as
// Eventarc does, grows: the instance that holds several of its events sums
// the shard (once while it waits for the window, then at its fold) and
// takes the rate from those sums. The total ends exact.
func TestBurstGrowsFromSums(t *testing.T) {
	t.Parallel()
	h := newHistory(t)
	oneShard(h)
	c := h.concurrently(h.handler(Config{Spacing: 500 * time.Millisecond, Grow: growing}))
	for range 300 {
		c.deliver(h.incr(0, 1)) // as it is written
	}
	c.wait()
	h.checkExact()
	if n := h.numShards(); n < 2 {
		t.Errorf("num_shards = %d after 300 writes in a row; want it grown", n)
	}
	if !strings.Contains(h.logs.String(), "added shards") {
		t.Error("growth was not logged")
	}
}

// TestGrowthFollowsWritesNotAmounts: increments of 1,000 each are writes,
// not thousands: a counter grows for the writes it took in the time they
// took (here at most 16 in 100 ms or more: at most 160 a second), not to
// the most shards, 1,000, as their amounts alone would have it. The rate
// is taken between two sums whatever the machine's speed: a first write
// is folded, so that the fold spacing (1 s) holds the next events; eight
// writes, whose held events have the instance sum the shard (the rate's
// base); then eight more, after that sum, which the fold a spacing later
// sums.
func TestGrowthFollowsWritesNotAmounts(t *testing.T) {
	t.Parallel()
	h := newHistory(t)
	oneShard(h)
	live := h.handler(Config{Spacing: time.Second, Grow: growing})
	c := h.concurrently(live)
	c.deliver(h.incr(0, 1000))
	c.wait()
	for range 8 {
		c.deliver(h.incr(0, 1000))
	}
	for deadline := time.Now().Add(emulatortest.Liveness); baseOf(live, h.id).IsZero(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the instance holding 8 events of a counter on one shard never summed it")
		}
	}
	for range 8 {
		c.deliver(h.incr(0, 1000))
	}
	c.wait()
	h.checkExact()
	if n := h.numShards(); n < 2 || n > 160 {
		t.Errorf("num_shards = %d after 17 writes of 1,000; want it grown for 8 writes in 100 ms or more, to at most 160", n)
	}
}

// baseOf is the read time of the sum the handler's growth measures
// counter id's rate from; zero if none.
func baseOf(hd *Handler, id string) time.Time {
	hd.tracker.mu.Lock()
	defer hd.tracker.mu.Unlock()
	if c := hd.tracker.counters[id]; c != nil {
		return c.base.At
	}
	return time.Time{}
}
