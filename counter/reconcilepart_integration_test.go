package counter_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/counter"
	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/testkit/layouttest"
)

// TestReconcilePartSumsWithOneQuery: a part of Reconcile reads its
// counters with one batched read and sums all their shards with one query,
// through a client that refuses every aggregation, and is exact as a
// reconcile of each is: a drifted total put right, a shard numbered past
// num_shards counted and moved into a kept one, a counter on four shards,
// one with no drift, and a counted document deleted and created again,
// whose shards of its first life count for nothing. A counter those reads
// cannot tell (its parent missing, as Google's samples leave it; a shard
// holding a double) is reconciled as before, by aggregation: the first
// made, the second refused with the error it always had.
func TestReconcilePartSumsWithOneQuery(t *testing.T) {
	t.Parallel()
	fs, noAggregation := emulatortest.Client(t), refusingAggregations(t)
	ctx := context.Background()
	guide := core.Default()
	guide.Collection = "r" + emulatortest.ID(t)
	field := guide.Counts("a")[0].Field
	set := func(ref *firestore.DocumentRef, data map[string]any) {
		t.Helper()
		if _, err := ref.Set(ctx, data); err != nil {
			t.Fatal(err)
		}
	}
	// name: num_shards, shard values, the total written
	counters := []struct {
		name   string
		shards map[int]any
		num    int
		total  int64
		sum    int64
		extra  int
	}{
		{"a-drifted", map[int]any{0: int64(3)}, 1, 5, 3, 0},
		{"b-left-over", map[int]any{0: int64(4), 1: int64(1), 6: int64(2)}, 2, 5, 7, 1},
		{"c-four", map[int]any{0: int64(1), 1: int64(2), 2: int64(3), 3: int64(4)}, 4, 10, 10, 0},
		{"d-right", map[int]any{0: int64(8)}, 1, 8, 8, 0},
	}
	var names []string
	for _, k := range counters {
		names = append(names, k.name)
		set(guide.Counter(fs, k.name), map[string]any{core.FieldNumShards: k.num, field: k.total,
			core.FieldAsOf: time.Now().Add(-time.Hour)})
		for n, v := range k.shards {
			set(guide.Shard(fs, k.name, "", n), map[string]any{guide.ShardField: v})
		}
	}
	time.Sleep(2 * window) // past the spacing since the documents were written, or a fold would wait, and read again
	c := counter.New(noAggregation, counter.Options{Layout: layouttest.Public(guide), Spacing: window})
	rep, err := c.RunPart(ctx, counter.Part{Job: counter.JobReconcile, At: time.Now(), Seq: 1, Names: names}, func(name string, err error) {
		t.Errorf("%s: %v", name, err)
	})
	if err != nil || rep.Moved != len(names) || rep.Failed != 0 {
		t.Fatalf("the part: %+v, %v; want all %d reconciled with no aggregation", rep, err, len(names))
	}
	repaired := map[string]counter.Drift{}
	for _, d := range rep.Repaired {
		repaired[d.Counter] = d
	}
	for _, k := range counters {
		if got := total(t, fs, guide.Collection+"/"+k.name, field); got != k.sum {
			t.Errorf("%s: total %d, want %d, its shards' sum", k.name, got, k.sum)
		}
		if d := repaired[k.name]; d.Drift != k.total-k.sum || d.Extra != k.extra && d.Drift != 0 {
			t.Errorf("%s: repaired %+v, want drift %d, %d shards past num_shards", k.name, d, k.total-k.sum, k.extra)
		}
	}
	if snap, err := guide.Shard(fs, "b-left-over", "", 6).Get(ctx); err == nil && snap.Exists() {
		t.Error("b-left-over: shard 6 is still there")
	}

	// What the reads cannot tell: reconciled by aggregation, as before.
	set(guide.Shard(fs, "e-no-parent", "", 0), map[string]any{guide.ShardField: int64(2)})
	set(guide.Counter(fs, "f-double"), map[string]any{core.FieldNumShards: 1, field: int64(1)})
	set(guide.Shard(fs, "f-double", "", 0), map[string]any{guide.ShardField: 1.5})
	c = counter.New(fs, counter.Options{Layout: layouttest.Public(guide), Spacing: window})
	var failed []error
	rep, err = c.RunPart(ctx, counter.Part{Job: counter.JobReconcile, At: time.Now(), Seq: 2, Names: []string{"e-no-parent", "f-double"}},
		func(_ string, err error) { failed = append(failed, err) })
	if err != nil || rep.Moved != 2 || rep.Failed != 0 || len(failed) != 0 {
		t.Errorf("the part: %+v, %v, %v; want e-no-parent made, f-double folded past its double", rep, err, failed)
	}
	if got := total(t, fs, guide.Collection+"/f-double", field); got != 0 {
		t.Errorf("f-double: total %d, want 0, its one shard's double skipped", got)
	}
	if got := total(t, fs, guide.Collection+"/e-no-parent", field); got != 2 {
		t.Errorf("e-no-parent: total %d, want 2", got)
	}
	reconcileRecreated(t, fs, noAggregation)
}

// reconcileRecreated: a counted document deleted and created again is
// reconciled from the shards of its present life alone.
func reconcileRecreated(t *testing.T, fs, noAggregation *firestore.Client) {
	t.Helper()
	ctx := context.Background()
	layout := core.Default()
	coll := "rl" + emulatortest.ID(t)
	var err error
	if layout.Docs, err = core.ParseCounts(coll + ":likes"); err != nil {
		t.Fatal(err)
	}
	id := coll + "/p"
	for i, likes := range []int64{3, 2} {
		writer := counter.New(fs, counter.Options{Layout: layouttest.Public(layout), Spacing: window}) // no cache of the first life
		if i > 0 {
			if _, err := fs.Doc(id).Delete(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := fs.Doc(id).Create(ctx, map[string]any{"title": fmt.Sprint("life ", i)}); err != nil {
			t.Fatal(err)
		}
		if err := writer.Add(ctx, id, "likes", likes); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(2 * window)
	c := counter.New(noAggregation, counter.Options{Layout: layouttest.Public(layout), Spacing: window})
	rep, err := c.RunPart(ctx, counter.Part{Job: counter.JobReconcile, At: time.Now(), Seq: 1, Names: []string{id}}, nil)
	if err != nil || rep.Moved != 1 {
		t.Fatalf("the part: %+v, %v", rep, err)
	}
	if got := total(t, fs, id, "likes"); got != 2 {
		t.Errorf("likes %d after a reconcile, want 2, its present life's", got)
	}
}
