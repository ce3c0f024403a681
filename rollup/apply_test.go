package rollup

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/tallycounters/tally/layout"
)

// workload writes a mixed history to three shards: creates, increments up and
// down, a reset and a delete, and returns its changes in commit order.
func workload(h *history) []Change {
	h.set(0, 0)
	h.incr(1, 5) // created by an increment, as Increment does
	for i := 0; i < 4; i++ {
		h.incr(0, 2)
		h.incr(1, -1)
		h.incr(2, 3)
	}
	h.set(2, 0) // reset
	h.incr(2, 7)
	h.delete(1)
	h.incr(1, 4) // re-created
	return h.changes
}

func TestApplyInOrder(t *testing.T) {
	h := newHistory(t)
	h.apply(workload(h)...)
	h.checkExact()
}

func TestApplyEveryEventTwice(t *testing.T) {
	h := newHistory(t)
	changes := workload(h)
	for _, c := range changes {
		h.apply(c, c)
	}
	h.apply(changes...) // and the whole stream again, late
	h.checkExact()
}

func TestApplyShuffled(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		h := newHistory(t)
		changes := workload(h)
		r := rand.New(rand.NewPCG(seed, seed))
		r.Shuffle(len(changes), func(i, j int) { changes[i], changes[j] = changes[j], changes[i] })
		h.apply(changes...)
		h.checkExact()
	}
}

// TestApplyOneMissingThenLate holds back each event of the history in turn:
// the later events close the gap by reading the shard, and the held-back
// event, delivered last, is skipped as already covered.
func TestApplyOneMissingThenLate(t *testing.T) {
	n := len(workload(newHistory(t)))
	for k := 0; k < n; k++ {
		h := newHistory(t)
		changes := workload(h)
		missing := changes[k]
		rest := slices.Delete(slices.Clone(changes), k, k+1)
		a := NewApplier(h.client, h.layout)
		var repaired int
		for _, c := range rest {
			res, err := a.Apply(context.Background(), h.id, []Change{c})
			if err != nil {
				t.Fatal(err)
			}
			repaired += res.Repaired
		}
		// Only a later event on the same shard can reveal the gap.
		covered := laterOnShard(rest[k:], missing.Shard)
		if covered {
			h.checkExact()
			if repaired == 0 {
				t.Errorf("event %d missing: no shard was repaired", k)
			}
		}
		res, err := a.Apply(context.Background(), h.id, []Change{missing})
		if err != nil {
			t.Fatal(err)
		}
		if covered && (res.Skipped != 1 || res.Delta != 0) {
			t.Errorf("event %d delivered late: %+v, want it skipped", k, res)
		}
		h.checkExact()
	}
}

func laterOnShard(changes []Change, shard int) bool {
	return slices.ContainsFunc(changes, func(c Change) bool { return c.Shard == shard })
}

func TestApplyShardDeleted(t *testing.T) {
	h := newHistory(t)
	h.incr(0, 5)
	h.incr(1, 3)
	h.delete(0)
	h.apply(h.changes...)
	h.checkExact()
	if got := h.total(); got != 3 {
		t.Errorf("total = %d, want 3", got)
	}

	// Deleted and re-created, delivered newest first.
	h = newHistory(t)
	h.incr(0, 5)
	h.delete(0)
	h.incr(0, 2)
	h.delete(0)
	h.incr(0, 9)
	slices.Reverse(h.changes)
	h.apply(h.changes...)
	h.checkExact()
}

func TestApplyShardResetToZero(t *testing.T) {
	h := newHistory(t)
	h.incr(0, 5)
	h.incr(0, 5)
	h.set(0, 0)
	h.incr(0, 1)
	h.apply(h.changes...)
	if got := h.total(); got != 1 {
		t.Errorf("total = %d, want 1", got)
	}
	h.checkExact()
}

// TestApplyGuideCounter starts from a counter made the way Google's guide
// makes one: num_shards on the parent and shards pre-created with count 0,
// before any trigger existed, so their creation events never arrive.
func TestApplyGuideCounter(t *testing.T) {
	h := newHistory(t)
	ctx := context.Background()
	parent := h.layout.Counter(h.client, h.id)
	if _, err := parent.Set(ctx, map[string]any{layout.FieldNumShards: int64(4), "label": "likes"}); err != nil {
		t.Fatal(err)
	}
	for n := 0; n < 4; n++ {
		h.set(n, 0)
	}
	h.changes = nil // the trigger was deployed after this point
	h.incr(2, 1)
	h.incr(3, 1)
	h.incr(2, 1)
	h.apply(h.changes...)
	h.checkExact()
	p := h.parent()
	if p[layout.FieldNumShards] != int64(4) || p["label"] != "likes" || p[layout.FieldTotal] != int64(3) {
		t.Errorf("parent = %v, want num_shards 4, label likes, total 3", p)
	}
}

func TestApplyParentMissing(t *testing.T) {
	h := newHistory(t)
	h.incr(7, 2)
	h.incr(7, 2)
	if h.parent() != nil {
		t.Fatal("parent exists before the rollup ran")
	}
	h.apply(h.changes...)
	h.checkExact()
	if _, ok := h.parent()[layout.FieldNumShards]; ok {
		t.Error("rollup wrote num_shards; it belongs to the admin")
	}
}

// TestApplyBatch hands Apply the whole history at once, shuffled and with
// every event twice, as group commit will.
func TestApplyBatch(t *testing.T) {
	h := newHistory(t)
	changes := workload(h)
	batch := append(slices.Clone(changes), changes...)
	rand.Shuffle(len(batch), func(i, j int) { batch[i], batch[j] = batch[j], batch[i] })
	res, err := NewApplier(h.client, h.layout).Apply(context.Background(), h.id, batch)
	if err != nil {
		t.Fatal(err)
	}
	h.checkExact()
	if res.Applied+res.Skipped+res.Repaired != len(batch) {
		t.Errorf("result %+v does not account for %d changes", res, len(batch))
	}
}

// TestApplyConcurrent delivers every event twice from concurrent handlers;
// the transaction on the parent keeps them exact.
func TestApplyConcurrent(t *testing.T) {
	h := newHistory(t)
	changes := workload(h)
	a := NewApplier(h.client, h.layout)
	var wg sync.WaitGroup
	errs := make(chan error, 2*len(changes))
	for _, c := range append(slices.Clone(changes), changes...) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := a.Apply(context.Background(), h.id, []Change{c})
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			// A contended transaction may give up; the platform would retry.
			t.Logf("Apply: %v (retrying)", err)
		}
	}
	h.apply(changes...) // the platform's retries
	h.checkExact()
}

func TestApplyRejectsOtherCounter(t *testing.T) {
	h := newHistory(t)
	c := h.incr(0, 1)
	c.Counter = "other"
	if _, err := NewApplier(h.client, h.layout).Apply(context.Background(), h.id, []Change{c}); err == nil {
		t.Error("Apply took a change for another counter")
	}
}
