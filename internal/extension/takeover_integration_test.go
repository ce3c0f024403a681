package extension_test

import (
	"context"
	"fmt"
	"testing"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/extension"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/tools/extworker"
)

// TestTakeover: a database the extension worked on, its workers stopped
// midway: 12 documents at two depths, each with client shards (three
// clients each adding 1 to likes and 2 to stats.views), the stand-in
// workers having moved some of them into partials and some partials into
// the documents; one shard holding a string; the workers' state under
// the state path the install chose. A dry run reports every document,
// shard, partial and total, and the state, and changes nothing. The
// takeover then leaves each document holding all its counts, no shard or
// partial but the odd one, and no state; a second run finds nothing.
func TestTakeover(t *testing.T) {
	c := emulatortest.Client(t)
	ctx := context.Background()
	root := emulatortest.ID(t)
	ext := declare(t, root+":likes,stats.views;users/*/posts:likes,stats.views")
	w := extworker.Worker{Client: c}
	var docs []string
	for i := range 12 {
		doc := fmt.Sprintf("%s/p%d", root, i)
		if i%3 == 0 {
			doc = fmt.Sprintf("users/%s/posts/p%d", root, i)
		}
		docs = append(docs, doc)
		for k := range 3 {
			shard := c.Doc(doc).Collection(extension.Collection).Doc(fmt.Sprintf("%04x-client-%d", 4096*k+i, k))
			if _, err := extworker.Increment(ctx, shard, "likes", 1); err != nil {
				t.Fatal(err)
			}
			if _, err := extworker.Increment(ctx, shard, "stats.views", 2); err != nil {
				t.Fatal(err)
			}
		}
		if i%2 == 0 {
			if _, err := w.ToPartials(ctx, doc); err != nil {
				t.Fatal(err)
			}
		}
		if i%4 == 0 {
			if _, err := w.ToDocument(ctx, doc); err != nil {
				t.Fatal(err)
			}
		}
	}
	put(t, c, docs[1]+"/_counter_shards_/zz-odd", map[string]any{"likes": "many"})
	state := root + "_ext/counter_state"
	if err := w.LeaveState(ctx, state, 2); err != nil {
		t.Fatal(err)
	}
	held := func() (likes, views int64) {
		for _, d := range docs {
			n, err := heldOf(ctx, c, d)
			if err != nil {
				t.Fatal(err)
			}
			likes, views = likes+n[0], views+n[1]
		}
		return likes, views
	}
	dry, err := extension.Takeover(ctx, c, core.Default(), extension.TakeoverOptions{Counters: ext, DryRun: true, StatePaths: []string{state}})
	if err != nil {
		t.Fatal(err)
	}
	if dry.Totals.Of(firestore.FieldPath{"likes"}) == nil || len(dry.State) != 3 || dry.Left[docs[1]+"/_counter_shards_/zz-odd"] == nil {
		t.Errorf("the dry run: %+v; want the totals, the state's 3 documents, and the odd shard", dry)
	}
	if likes, views := held(); likes != 36 || views != 72 {
		t.Errorf("before: %d likes and %d views held; want 36 and 72", likes, views)
	}
	if snap, err := c.Doc(state).Get(ctx); err != nil || !snap.Exists() {
		t.Errorf("the dry run removed the state: %v", err)
	}

	r, err := extension.Takeover(ctx, c, core.Default(), extension.TakeoverOptions{Counters: ext, StatePaths: []string{state}})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.State) != 3 {
		t.Errorf("removed %v; want the state's 3 documents", r.State)
	}
	for _, d := range docs {
		snap, err := c.Doc(d).Get(ctx)
		if err != nil {
			t.Fatal(err)
		}
		stats, _ := snap.Data()["stats"].(map[string]any)
		if snap.Data()["likes"] != int64(3) || stats["views"] != int64(6) {
			t.Errorf("%s after the takeover: %v; want likes 3, stats.views 6", d, snap.Data())
		}
		left := shardsOf(t, c, d)
		if d == docs[1] && (len(left) != 1 || left[0] != "zz-odd") || d != docs[1] && len(left) != 0 {
			t.Errorf("%s has %q left; want nothing but the odd shard", d, left)
		}
	}
	if refs, err := c.Doc(state).Collection("workers").DocumentRefs(ctx).GetAll(); err != nil || len(refs) != 0 {
		t.Errorf("workers left: %v, %v", refs, err)
	}
	again, err := extension.Takeover(ctx, c, core.Default(), extension.TakeoverOptions{Counters: ext, StatePaths: []string{state}})
	if err != nil {
		t.Fatal(err)
	}
	if again.Shards+again.Partials != 0 || len(again.State) != 0 {
		t.Errorf("a second run: %d shards, %d partials, state %v; want nothing", again.Shards, again.Partials, again.State)
	}
}

// heldOf is what doc, its shards and partials hold of likes and of
// stats.views, at one read time.
func heldOf(ctx context.Context, c *firestore.Client, doc string) ([2]int64, error) {
	var n [2]int64
	err := c.RunTransaction(ctx, func(ctx context.Context, tx *firestore.Transaction) error {
		n = [2]int64{}
		add := func(a extension.Amounts) {
			l, _ := a.Of(firestore.FieldPath{"likes"}).(int64)
			v, _ := a.Of(firestore.FieldPath{"stats", "views"}).(int64)
			n[0], n[1] = n[0]+l, n[1]+v
		}
		if snap, err := tx.Get(c.Doc(doc)); err == nil {
			data := snap.Data()
			delete(data, core.FieldBookkeeping)
			a, _ := extension.ShardAmounts(data)
			add(a)
		}
		snaps, err := tx.Documents(c.Doc(doc).Collection(extension.Collection)).GetAll()
		if err != nil {
			return err
		}
		for _, s := range snaps {
			if a, err := extension.AmountsOf(s.Ref.ID, s.Data()); err == nil {
				add(a)
			}
		}
		return nil
	}, firestore.ReadOnly)
	return n, err
}
