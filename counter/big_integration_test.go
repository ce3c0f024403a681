package counter_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/counter"
	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/tools/emulator"
)

// TestTenThousandShards: the commands whose work grows with a counter's
// shards finish at 10,000 shards with the CLI's default bound on each
// call (the CLI's --timeout, 10 s), report their progress as they go, and leave nothing half
// done when cut off: a shrink cut off after its first moves leaves every
// sum as it was and says so, and the same reshard run again finishes it;
// a reconcile moves shards left past num_shards, a reset sets them all to
// 0, and a delete removes them all.
func TestTenThousandShards(t *testing.T) {
	emulatortest.Long(t, "10,000 shards")
	t.Parallel()
	// An emulator of its own, with no trigger: the 50,000 events of these
	// writes would hold up the shared stack's delivery for a minute.
	e, err := emulatortest.Start(emulator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Stop()
	fs := emulatortest.ClientAt(t, e.Host(), emulatortest.Project)
	ctx := context.Background()
	var mu sync.Mutex
	var lines []string
	var cut func()
	c := counter.New(fs, counter.Options{ShardCacheTTL: cacheTTL, Spacing: window, Timeout: 10 * time.Second, RefuseMissing: true,
		Progress: func(line string) {
			mu.Lock()
			defer mu.Unlock()
			lines = append(lines, line)
			if cut != nil {
				cut()
			}
		}})
	counter.ReportEvery(c, 0) // every step, so that a quick machine reports too
	id := emulatortest.ID(t)
	if err := c.Create(ctx, id, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Reshard(ctx, id, core.MaxShards, nil); err != nil {
		t.Fatal(err)
	}
	for range 7 {
		if err := c.Add(ctx, id, "", 3); err != nil {
			t.Fatal(err)
		}
	}
	sum := func() int64 {
		t.Helper()
		n, err := c.Sum(ctx, id, "")
		if err != nil {
			t.Fatal(err)
		}
		return n
	}

	// A shrink cut off at its first report of progress.
	cctx, cancel := context.WithCancel(ctx)
	cut = cancel
	_, err = c.Reshard(cctx, id, 1, nil)
	cut = nil
	if err == nil || !strings.Contains(err.Error(), "run it again") {
		t.Fatalf("a reshard cut off: %v; want it to say how far it got, and to run it again", err)
	}
	if got := sum(); got != 21 {
		t.Fatalf("sum = %d after a reshard cut off, want 21", got)
	}
	if _, err := c.Reshard(ctx, id, 1, nil); err != nil {
		t.Fatalf("the same reshard again: %v", err)
	}
	shards, err := core.Default().Shards(fs, id, "").Select().Documents(ctx).GetAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(shards) != 1 || sum() != 21 {
		t.Errorf("after the reshard run again: %d shards, sum %d; want 1 and 21", len(shards), sum())
	}
	snap, err := core.Default().Counter(fs, id).Get(ctx)
	if err != nil || snap.Data()[core.FieldResharding] != nil {
		t.Errorf("the counter = %v, %v; want its shrink finished, no %s", snap.Data(), err, core.FieldResharding)
	}

	// Shards left past num_shards, as by a shrink cut off before its moves.
	if _, err := c.Reshard(ctx, id, core.MaxShards, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := core.Default().Counter(fs, id).Update(ctx, []firestore.Update{{Path: core.FieldNumShards, Value: int64(1)}}); err != nil {
		t.Fatal(err)
	}
	ds, err := c.Reconcile(ctx, id)
	if err != nil || ds[0].Extra != core.MaxShards-1 || sum() != 21 {
		t.Errorf("reconcile: %+v, %v, sum %d; want %d shards moved, sum 21", ds, err, sum(), core.MaxShards-1)
	}
	if _, err := c.Reshard(ctx, id, core.MaxShards, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.Reset(ctx, id); err != nil || sum() != 0 {
		t.Errorf("reset: %v, sum %d", err, sum())
	}
	if err := c.Delete(ctx, id); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Sum(ctx, id, ""); !errors.Is(err, counter.ErrNotFound) {
		t.Errorf("after delete: %v; want %v", err, counter.ErrNotFound)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, want := range []string{"moved", "documents written"} {
		found := false
		for _, l := range lines {
			found = found || strings.Contains(l, want)
		}
		if !found {
			t.Errorf("no progress line says %q: %q", want, lines)
		}
	}
}
