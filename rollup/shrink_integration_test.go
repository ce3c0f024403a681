package rollup

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"

	"github.com/tallycounters/tally/counter"
	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/testkit/layouttest"
)

// TestQuietCounterShrinks: a counter on 8 shards, written on each, then
// quiet for longer than the policy's Quiet, shrinks to one shard at its
// next fold, marked resharding so that no fold takes shard 0 for the whole
// count while the others hold some; the total stays exact through the
// shrink and a straggler on a removed shard. Reconcile, once every
// increment has seen the one shard, moves the other shards into shard 0
// and clears the mark. A counter as busy as its shards stays.
func TestQuietCounterShrinks(t *testing.T) {
	t.Parallel()
	const quiet = 2 * time.Second
	h := newHistory(t)
	if _, err := h.layout.Counter(h.client, h.id).Set(context.Background(), map[string]any{core.FieldNumShards: 8, core.FieldTotal: 0}); err != nil {
		t.Fatal(err)
	}
	live := h.handler(Config{Grow: GrowPolicy{PerShard: 1, Max: 8, Period: 100 * time.Millisecond, Quiet: quiet}})
	var written []event.Event
	for n := range 8 {
		written = append(written, h.incr(n, 1))
	}
	h.deliver(live, written...) // 8 writes a second or more: as busy as 8 shards take
	h.checkExact()
	if n := h.numShards(); n != 8 {
		t.Fatalf("num_shards = %d while written on every shard; want 8", n)
	}

	time.Sleep(quiet + 500*time.Millisecond)
	h.deliver(live, h.incr(0, 1))
	h.checkExact()
	if n := h.numShards(); n != 1 {
		t.Fatalf("num_shards = %d after %v quiet; want 1", n, quiet)
	}
	if _, marked := h.parent().Data()[core.FieldResharding]; !marked {
		t.Fatal("shrunk to one shard with other shards holding counts, and not marked resharding")
	}
	if !strings.Contains(h.logs.String(), "took shards from a quiet counter") {
		t.Error("the shrink was not logged")
	}
	time.Sleep(testWindow)
	h.deliver(live, h.incr(5, 1)) // an increment that had num_shards 8 cached
	h.checkExact()

	c := counter.New(h.client, counter.Options{Layout: layouttest.Public(h.layout), ShardCacheTTL: 100 * time.Millisecond, Spacing: testWindow})
	time.Sleep(2500 * time.Millisecond) // the mark is older than the cache and its margin
	if _, err := c.Reconcile(context.Background(), h.id); err != nil {
		t.Fatal(err)
	}
	h.checkExact()
	if _, marked := h.parent().Data()[core.FieldResharding]; marked {
		t.Error("Reconcile moved the other shards but left the resharding mark")
	}
	refs, err := h.layout.Shards(h.client, h.id, "").DocumentRefs(context.Background()).GetAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(refs) != 1 || refs[0].ID != "0" {
		t.Errorf("shards after Reconcile: %d; want shard 0 alone", len(refs))
	}
	time.Sleep(testWindow)
	h.deliver(live, h.incr(0, 1))
	h.checkExact()
}
