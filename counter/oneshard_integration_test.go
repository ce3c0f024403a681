package counter_test

import (
	"context"
	"testing"
	"time"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
)

// TestReshardToOneWhileIncrementing shrinks a counter from 4 shards to 1
// while increments run. Once on one shard, the rollup takes its count from
// shard 0's events, with no read; while the other shards still hold counts
// (until they are moved), it must not, and the counter says so. A listener
// on the total never sees it go down, it ends exact, and the mark is gone.
func TestReshardToOneWhileIncrementing(t *testing.T) {
	t.Parallel()
	emulatortest.Require(t)
	c, fs, id := newCounter(t, 4)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	watched := watchTotals(ctx, c, id)
	stop := incrementing(t, id, 4)
	time.Sleep(500 * time.Millisecond)
	// Between lowering num_shards and the moves (when Reshard says it
	// waits out the Increment instances' cache), the counter is marked.
	marked := false
	wait := func(time.Duration, string) {
		snap, err := core.Default().Counter(fs, id).Get(ctx)
		marked = err == nil && snap.Data()[core.FieldResharding] != nil
	}
	if old, err := c.Reshard(ctx, id, 1, wait); err != nil || old != 4 {
		t.Fatalf("Reshard = %d, %v", old, err)
	}
	if !marked {
		t.Errorf("while shrinking to one shard, the counter did not hold %s", core.FieldResharding)
	}
	time.Sleep(time.Second) // increments on one shard, folded from their events
	want := stop()
	waitTotal(t, c, id, want)
	cancel()
	seen := watched()
	for i := 1; i < len(seen); i++ {
		if seen[i] < seen[i-1] {
			t.Fatalf("the total went down from %d to %d (of %d seen: %v)", seen[i-1], seen[i], len(seen), seen)
		}
	}
	snap, err := core.Default().Counter(fs, id).Get(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := snap.Data()[core.FieldResharding]; ok {
		t.Errorf("%s is still set after the reshard", core.FieldResharding)
	}
	if n, _ := snap.DataAt(core.FieldNumShards); n != int64(1) {
		t.Errorf("num_shards = %v after the reshard, want 1", n)
	}
}
