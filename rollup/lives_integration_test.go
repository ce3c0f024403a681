package rollup

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tallycounters/tally/internal/adder"
	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/testkit/layouttest"
	"github.com/tallycounters/tally/internal/tools/eventarc"
)

// TestCreatedAgainTakesWhatCameAfter drives, step by step, the order of
// things that once gave a post created again its earlier likes, and once
// lost what came after: a Rollup instance folds the post's 4 likes and so
// knows it (it leads); the app deletes the post; an Increment instance
// whose cache still holds the post is refused 5 likes (the post is gone:
// each commit verifies it, and writes nothing); the app creates the post
// again with likes 0; another Increment instance, whose cache still holds
// the post's earlier life, adds a view to that life's shard, whose event
// reaches the instance that knows the post as it was. Its fold on that
// view fails, reads the post as it is, and must not write the earlier
// life's counts onto it, nor lose the view: it moves what the earlier life
// took after the post's new life began (the view) into it. The post has
// likes 0 and views 1.
func TestCreatedAgainTakesWhatCameAfter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	client, l, name := newPost(t, "posts:likes,views")
	stale := adder.New(client, adder.Config{Layout: l, CacheTTL: time.Hour})
	other := adder.New(client, adder.Config{Layout: l, CacheTTL: time.Hour})
	h := New(client, Config{Layout: layouttest.Public(l), Project: emulatortest.Project, Spacing: testWindow})
	likes, views := core.Count{Field: "likes", Shard: "likes"}, core.Count{Field: "views", Shard: "views"}
	add := func(c core.Count) {
		t.Helper()
		if _, _, err := stale.Add(ctx, name, c, 1); err != nil {
			t.Fatal(err)
		}
	}
	// deliver hands Rollup the event of shard 0's last write, as Eventarc
	// would, built from the shard as the emulator holds it.
	first := emulatortest.Life(t, l, client, name)
	deliver := func() {
		t.Helper()
		snap, err := l.Shard(client, name, first, 0).Get(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := h.Handle(ctx, eventarc.Written(emulatortest.Project, "(default)", nil, eventarc.Snapshot(snap))); err != nil {
			t.Fatal(err)
		}
	}
	post := func() map[string]any {
		t.Helper()
		snap, err := client.Doc(name).Get(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return snap.Data()
	}

	for range 4 {
		add(likes)
	}
	if _, _, _, err := other.Fields(ctx, name, views, 1); err != nil { // it reads the post, and caches it
		t.Fatal(err)
	}
	deliver()
	if got := post()["likes"]; got != int64(4) {
		t.Fatalf("likes = %v before the delete, want 4", got)
	}
	if _, err := client.Doc(name).Delete(ctx); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		if _, _, err := stale.Add(ctx, name, likes, 1); !errors.Is(err, core.ErrNoCounter) {
			t.Fatalf("a like of the deleted post: %v; want it refused", err)
		}
	}
	if _, err := client.Doc(name).Create(ctx, map[string]any{"title": "again", "likes": int64(0)}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * testWindow) // past the window: the instance that knew the post folds on its old view
	// other's cache still holds the earlier life
	if _, _, err := other.Add(ctx, name, views, 1); err != nil {
		t.Fatal(err)
	}
	deliver()

	got := post()
	if got["likes"] != int64(0) || got["views"] != int64(1) {
		t.Errorf("the post created again: likes %v, views %v; want likes 0 and views 1: the view came after it was created again", got["likes"], got["views"])
	}
	if bk, _ := got[core.FieldBookkeeping].(map[string]any); bk != nil && bk[core.FieldLife] == first {
		t.Errorf("_tally.life = %v, the earlier life's", bk[core.FieldLife])
	}
}
