package increment

import (
	"context"
	"testing"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
)

// TestOneShardWritesCarryTheParentVersion: a new counter has one shard, and
// the first increment after each read of its parent writes shard 0 with
// the parent's update time as read, which lets the rollup fold it with no
// read; later ones, after which a fold has most likely written the parent,
// remove it. Once the counter has more shards, or while it shrinks to one,
// no increment carries one.
func TestOneShardWritesCarryTheParentVersion(t *testing.T) {
	now := time.Now()
	h, c := newHandler(t, Config{AutoCreate: true, CacheTTL: time.Hour, Now: func() time.Time { return now }})
	ctx := context.Background()
	id := emulatortest.ID(t)
	parent, shard0 := core.Default().Counter(c, id), core.Default().Shard(c, id, "", 0)
	incr := func() time.Time { // shard 0's parent version after an increment that landed on it
		t.Helper()
		for {
			if step(t, h, id) == 0 {
				break
			}
		}
		snap, err := shard0.Get(ctx)
		if err != nil {
			t.Fatalf("shard 0: %v (every increment of a counter on one shard writes it)", err)
		}
		v, _ := snap.Data()[core.FieldParentSeen].(time.Time)
		return v
	}
	updated := func() time.Time {
		t.Helper()
		snap, err := parent.Get(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n, _ := snap.DataAt(core.FieldNumShards); n != int64(1) {
			t.Errorf("a new counter has num_shards %v, want 1", n)
		}
		return snap.UpdateTime
	}
	if v, u := incr(), updated(); !v.Equal(u) {
		t.Errorf("the first increment carried the parent version %v, want the parent's update time %v", v, u)
	}
	if v := incr(); !v.IsZero() {
		t.Errorf("the second increment left the parent version %v; want none", v)
	}
	if _, err := parent.Update(ctx, []firestore.Update{{Path: "note", Value: "the app or a fold wrote it"}}); err != nil {
		t.Fatal(err)
	}
	now = now.Add(2 * time.Hour) // the cache has expired
	if v, u := incr(), updated(); !v.Equal(u) {
		t.Errorf("the first increment after a new read carried the parent version %v, want the parent's update time %v", v, u)
	}
	if got := shards(t, c, id); len(got) != 1 || got["0"] != 3 { // on one shard, every increment lands on shard 0
		t.Errorf("shards %v, want 3 on shard 0", got)
	}

	for _, tc := range []struct {
		name   string
		update []firestore.Update
	}{
		{"grown to 3 shards", []firestore.Update{{Path: core.FieldNumShards, Value: 3}}},
		{"shrinking to 1", []firestore.Update{{Path: core.FieldNumShards, Value: 1}, {Path: core.FieldResharding, Value: firestore.ServerTimestamp}}},
	} {
		if _, err := parent.Update(ctx, tc.update); err != nil {
			t.Fatal(err)
		}
		now = now.Add(2 * time.Hour)
		for range 5 {
			if v := incr(); !v.IsZero() {
				t.Fatalf("%s: shard 0 carries the parent version %v", tc.name, v)
			}
		}
	}
}
