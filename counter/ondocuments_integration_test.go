package counter_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/counter"
	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/testkit/layouttest"
)

// TestDocsLifecycle runs the client's commands on counts on a post: each
// acts on tally's fields and subcollections and leaves the app's title
// alone, and none creates a post.
func TestDocsLifecycle(t *testing.T) {
	t.Parallel()
	emulatortest.Require(t)
	_, fs := newClient(t)
	l := core.Default()
	var err error
	if l.Docs, err = core.ParseCounts("posts:likes,views"); err != nil {
		t.Fatal(err)
	}
	c := counter.New(fs, counter.Options{Layout: layouttest.Public(l), ShardCacheTTL: cacheTTL, Spacing: window})
	ctx := context.Background()
	name := "posts/" + emulatortest.ID(t)
	if err := c.Create(ctx, name, 4); !errors.Is(err, counter.ErrNotFound) {
		t.Fatalf("Create of a missing post: %v, want ErrNotFound", err)
	}
	if _, err := fs.Doc(name).Create(ctx, map[string]any{"title": "hello", "views": 7}); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, name, 4); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, name, 4); !errors.Is(err, counter.ErrExists) {
		t.Errorf("a second Create: %v, want ErrExists", err)
	}
	check := func(when string, want map[string]any) {
		t.Helper()
		snap, err := fs.Doc(name).Get(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for f, v := range want {
			if got := snap.Data()[f]; got != v {
				t.Errorf("%s: %s = %v, want %v", when, f, got, v)
			}
		}
	}
	check("after Create", map[string]any{"title": "hello", "likes": int64(0), "views": int64(7)})
	for range 5 {
		if err := c.Add(ctx, name, "likes", 1); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Add(ctx, name, "views", 3); err != nil {
		t.Fatal(err)
	}
	if err := c.Add(ctx, name, "", 1); err == nil {
		t.Error("Add without a field was accepted")
	}
	ds, err := c.Reconcile(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 2 || ds[0].Field != "likes" || ds[0].Sum != 5 || ds[0].Drift != -5 || ds[1].Sum != 3 || ds[1].Total != 7 {
		t.Errorf("Reconcile = %+v; want likes 0 -> 5 and views 7 -> 3", ds)
	}
	check("after Reconcile", map[string]any{"title": "hello", "likes": int64(5), "views": int64(3)})
	if got, err := c.Get(ctx, name, "likes"); err != nil || got != 5 {
		t.Errorf("Get likes = %d, %v", got, err)
	}
	if old, err := c.Reshard(ctx, name, 2, nil); err != nil || old != 4 {
		t.Fatalf("Reshard = %d, %v", old, err)
	}
	for f, want := range map[string]int64{"likes": 5, "views": 3} {
		if sum, err := c.Sum(ctx, name, f); err != nil || sum != want {
			t.Errorf("after Reshard, %s sums %d (%v), want %d", f, sum, err, want)
		}
	}
	if err := c.Reset(ctx, name); err != nil {
		t.Fatal(err)
	}
	check("after Reset", map[string]any{"title": "hello", "likes": int64(0), "views": int64(0)})
	if err := c.Delete(ctx, name); err != nil {
		t.Fatal(err)
	}
	snap, err := fs.Doc(name).Get(ctx)
	if err != nil {
		t.Fatalf("Delete removed the post: %v", err)
	}
	if d := snap.Data(); len(d) != 1 || d["title"] != "hello" {
		t.Errorf("after Delete the post holds %v, want its title only", d)
	}
	if refs, _ := l.Lives(fs, name).DocumentRefs(ctx).GetAll(); len(refs) != 0 {
		t.Errorf("%d lives (of shards, votes, keys) left after Delete", len(refs))
	}
}

// TestReconcileAllAggregates: reconcile --all backfills the aggregates of
// documents that never had an event, a post's hand-kept count of its
// comments and one document's count of a collection from the root, and
// reports how far each had drifted.
func TestReconcileAllAggregates(t *testing.T) {
	t.Parallel()
	emulatortest.Require(t)
	_, fs := newClient(t)
	id := emulatortest.ID(t) // collections of the test's own: --all reads whole collection groups
	l := core.Default()
	var err error
	if l.Docs, err = core.ParseCounts("p" + id + ":comments=count(comments),stars=avg(comments.stars);s" + id + "/site:users=count(/u" + id + ")"); err != nil {
		t.Fatal(err)
	}
	c := counter.New(fs, counter.Options{Layout: layouttest.Public(l), ShardCacheTTL: cacheTTL, Spacing: window})
	ctx := context.Background()
	post, stats := fs.Collection("p"+id).Doc("post"), fs.Collection("s"+id).Doc("site")
	for doc, data := range map[*firestore.DocumentRef]map[string]any{post: {"title": "hello", "comments": int64(7)}, stats: {"name": "site"}} {
		if _, err := doc.Create(ctx, data); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		if _, err := fs.Collection("u"+id).NewDoc().Create(ctx, map[string]any{"n": i}); err != nil {
			t.Fatal(err)
		}
		if i < 2 {
			if _, err := post.Collection("comments").NewDoc().Create(ctx, map[string]any{"text": "hi", "stars": i + 1}); err != nil {
				t.Fatal(err)
			}
		}
	}
	drifts := map[string]counter.Drift{}
	if err := c.ReconcileAll(ctx, func(d counter.Drift, err error) {
		if err != nil {
			t.Errorf("reconcile: %v", err)
		}
		drifts[d.Counter+"."+d.Field] = d
	}); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]int64{"p" + id + "/post.comments": 5, "s" + id + "/site.users": -3} {
		if d := drifts[key]; d.Drift != want {
			t.Errorf("%s: drift %+v, want %d", key, d, want)
		}
	}
	for _, w := range []struct {
		doc, field string
		want       int64
	}{{"p" + id + "/post", "comments", 2}, {"s" + id + "/site", "users", 3}} {
		if got, err := c.Get(ctx, w.doc, w.field); err != nil || got != w.want {
			t.Errorf("%s.%s = %d, %v after reconcile, want %d", w.doc, w.field, got, err, w.want)
		}
	}
	// Value reads any aggregate as the rollup keeps it: an average of
	// stars 1 and 2 is 1.5; a field tally does not keep is refused.
	if got, err := c.Value(ctx, "p"+id+"/post", "stars"); err != nil || got != 1.5 {
		t.Errorf("Value stars = %v, %v; want 1.5", got, err)
	}
	if got, err := c.Value(ctx, "p"+id+"/post", "comments"); err != nil || got != int64(2) {
		t.Errorf("Value comments = %v (%T), %v; want 2", got, got, err)
	}
	if _, err := c.Value(ctx, "p"+id+"/post", "title"); err == nil || !strings.Contains(err.Error(), "not a declared count") {
		t.Errorf("Value of a field tally does not keep: %v; want it refused", err)
	}
}
