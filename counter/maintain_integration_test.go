package counter_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/counter"
	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
)

// incrementHTTP adds 1 through the running Increment function.
func incrementHTTP(t *testing.T, id string) bool {
	resp, err := http.Post(local.FunctionsURL+"/Increment", "application/json", strings.NewReader(`{"counter":"`+id+`"}`))
	if err != nil {
		t.Error(err)
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// TestResetRacingIncrements resets a counter while increments run: the total
// ends equal to the shards, and increments after the reset all count.
func TestResetRacingIncrements(t *testing.T) {
	t.Parallel()
	emulatortest.Require(t)
	c, _, id := newCounter(t, 5)
	ctx := context.Background()
	incrementAndWait(t, c, id, 20, 20)
	stop := incrementing(t, id, 4)
	time.Sleep(100 * time.Millisecond)
	if err := c.Reset(ctx, id); err != nil {
		t.Fatal(err)
	}
	stop()
	sum, err := c.Sum(ctx, id, "")
	if err != nil {
		t.Fatal(err)
	}
	waitTotal(t, c, id, sum)
	// After the reset, every increment counts from the shards' zeros.
	for i := 0; i < 7; i++ {
		incrementHTTP(t, id)
	}
	waitTotal(t, c, id, sum+7)

	// Reset folds: on a quiet counter, the total is 0 when it returns.
	if err := c.Reset(ctx, id); err != nil {
		t.Fatal(err)
	}
	if got, err := c.Get(ctx, id, ""); err != nil || got != 0 {
		t.Errorf("total right after Reset = %d, %v; want 0", got, err)
	}
	if err := c.Reset(ctx, emulatortest.ID(t)); !errors.Is(err, counter.ErrNotFound) {
		t.Errorf("Reset of a missing counter: %v", err)
	}
}

// TestReconcileRepairsCorruptedTotal overwrites a total, then
// reconciles: the drift is reported, the total repaired, and later
// increments stay exact.
func TestReconcileRepairsCorruptedTotal(t *testing.T) {
	t.Parallel()
	emulatortest.Require(t)
	c, fs, id := newCounter(t, 4)
	ctx := context.Background()
	incrementAndWait(t, c, id, 9, 9)
	corrupt(t, fs, id, 1000)
	ds, err := c.Reconcile(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if d := ds[0]; len(ds) != 1 || d.Total != 1000 || d.Sum != 9 || d.Drift != 991 || d.Shards != 4 {
		t.Errorf("drift = %+v, want total 1000, sum 9, drift 991 over 4 shards", ds)
	}
	if got, _ := c.Get(ctx, id, ""); got != 9 {
		t.Errorf("total after reconcile = %d, want 9", got)
	}
	incrementAndWait(t, c, id, 5, 14)
	if d, err := c.Reconcile(ctx, id); err != nil || d[0].Drift != 0 {
		t.Errorf("reconcile of an exact counter: %+v, %v", d, err)
	}
}

// corrupt overwrites id's total, its as_of kept: a total that says it
// holds every increment up to as_of and does not. (With as_of gone, an
// event of the increments late to Rollup would rightly fold the total
// again before the reconcile could find the drift.)
func corrupt(t *testing.T, fs *firestore.Client, id string, total int64) {
	t.Helper()
	_, err := core.Default().Counter(fs, id).Update(context.Background(), []firestore.Update{
		{Path: core.FieldTotal, Value: total},
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestReconcileAll folds every counter of the collection the other tests
// share, so it runs alone, not in parallel: it would repair the total
// TestReconcileRepairsCorruptedTotal corrupts before that test's own
// reconcile finds the drift.
func TestReconcileAll(t *testing.T) {
	emulatortest.Require(t)
	c, fs := newClient(t)
	ctx := context.Background()
	ids := []string{emulatortest.ID(t), emulatortest.ID(t)}
	for _, id := range ids {
		if err := c.Create(ctx, id, 2); err != nil {
			t.Fatal(err)
		}
		c.Add(ctx, id, "", 3)
		waitTotal(t, c, id, 3)
		corrupt(t, fs, id, -4)
	}
	found := map[string]counter.Drift{}
	err := c.ReconcileAll(ctx, func(d counter.Drift, err error) {
		if err == nil {
			found[d.Counter] = d
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if d := found[id]; d.Drift != -7 {
			t.Errorf("%s: drift %+v, want -7", id, d)
		}
		if got, _ := c.Get(ctx, id, ""); got != 3 {
			t.Errorf("%s: total %d after reconcile, want 3", id, got)
		}
	}
}

// TestDelete removes a counter with events still in flight: it stays gone.
func TestDelete(t *testing.T) {
	t.Parallel()
	emulatortest.Require(t)
	c, fs, id := newCounter(t, 3)
	ctx := context.Background()
	var n atomic.Int64
	for i := 0; i < 10; i++ {
		if incrementHTTP(t, id) {
			n.Add(1)
		}
	}
	if err := c.Delete(ctx, id); err != nil {
		t.Fatal(err)
	}
	// Let every event of the increments and the deletes reach the rollup.
	if err := local.Bridge.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	if err := local.Bridge.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if snap, _ := core.Default().Counter(fs, id).Get(ctx); snap.Exists() {
		t.Errorf("parent exists after delete: %v", snap.Data())
	}
	if refs, _ := core.Default().Shards(fs, id, "").DocumentRefs(ctx).GetAll(); len(refs) > 0 {
		t.Errorf("%d shards remain after delete", len(refs))
	}
	if err := c.Delete(ctx, id); !errors.Is(err, counter.ErrNotFound) {
		t.Errorf("second Delete: %v, want ErrNotFound", err)
	}
}

// TestReconcileMovesLeftOverShards: a shard numbered past num_shards (as an
// increment racing a reshard leaves) counts in the sum and is moved into a
// kept shard, and the total stays exact.
func TestReconcileMovesLeftOverShards(t *testing.T) {
	t.Parallel()
	emulatortest.Require(t)
	c, fs, id := newCounter(t, 2)
	ctx := context.Background()
	if _, err := core.Default().Shard(fs, id, "", 5).Set(ctx, map[string]any{"count": 4}); err != nil {
		t.Fatal(err)
	}
	incrementAndWait(t, c, id, 3, 7)
	ds, err := c.Reconcile(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if d := ds[0]; d.Sum != 7 || d.Extra != 1 || d.NumShards != 2 {
		t.Errorf("drift = %+v, want sum 7 with 1 shard past 2", ds)
	}
	if sum, _ := c.Sum(ctx, id, ""); sum != 7 {
		t.Errorf("Sum = %d after the move, want 7", sum)
	}
	if snap, _ := core.Default().Shard(fs, id, "", 5).Get(ctx); snap.Exists() {
		t.Error("shard 5 is still there")
	}
	waitTotal(t, c, id, 7)
}
