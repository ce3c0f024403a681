package extension_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/firestore"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/extension"
	"github.com/tallycounters/tally/internal/fold"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
)

// shardsOf are the ids of doc's shards and partials left.
func shardsOf(t *testing.T, c *firestore.Client, doc string) []string {
	t.Helper()
	refs, err := c.Doc(doc).Collection(extension.Collection).DocumentRefs(context.Background()).GetAll()
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range refs {
		ids = append(ids, r.ID)
	}
	return ids
}

func put(t *testing.T, c *firestore.Client, path string, data map[string]any) {
	t.Helper()
	if _, err := c.Doc(path).Set(context.Background(), data); err != nil {
		t.Fatal(err)
	}
}

// TestMoveTakesShardsAndPartials: a post's two client shards (one with
// two counters, one of them nested) and a partial of the extension's are
// moved into the post's fields in one commit, its own fields kept; a
// shard holding a string is left alone, and said; the move records as
// of when the post holds every shard write. A move asked for a write it
// covers writes nothing; one asked for a later write within the spacing
// waits.
func TestMoveTakesShardsAndPartials(t *testing.T) {
	c := emulatortest.Client(t)
	ctx := context.Background()
	doc := "posts/" + emulatortest.ID(t)
	put(t, c, doc, map[string]any{"title": "hello", "likes": int64(10)})
	put(t, c, doc+"/_counter_shards_/7f3a-client-1", map[string]any{"likes": int64(2), "stats": map[string]any{"views": int64(3)}})
	put(t, c, doc+"/_counter_shards_/0b1c-client-2", map[string]any{"likes": int64(1)})
	put(t, c, doc+"/_counter_shards_/\t7f3a", map[string]any{"_updates_": []any{
		map[string]any{"_id_": "a", "_data_": map[string]any{"likes": int64(5)}},
		map[string]any{"_id_": "b", "_data_": map[string]any{"likes": int64(-1)}},
	}})
	put(t, c, doc+"/_counter_shards_/9999-odd", map[string]any{"likes": int64(1), "who": "bo"})
	put(t, c, doc+"/_counter_shards_/4444-zero", map[string]any{"likes": int64(0)})

	m := extension.NewMover(c, core.Default(), extension.MoverOptions{Counters: declare(t, "posts:likes,stats.views"), Spacing: time.Hour})
	out, err := m.MoveNow(ctx, doc)
	if err != nil {
		t.Fatal(err)
	}
	if out.Shards != 2 || out.Partials != 1 || len(out.Left) != 1 || out.Left["9999-odd"] == nil || !strings.Contains(out.Left["9999-odd"].Error(), "who") {
		t.Errorf("moved %d shards and %d partials, left %v; want 2, 1 and the odd one", out.Shards, out.Partials, out.Left)
	}
	snap, err := c.Doc(doc).Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	d := snap.Data()
	stats, _ := d["stats"].(map[string]any)
	if d["likes"] != int64(17) || stats["views"] != int64(3) || d["title"] != "hello" {
		t.Errorf("the post after the move: %v; want likes 10+2+1+4, stats.views 3, its title", d)
	}
	book, _ := d[core.FieldBookkeeping].(map[string]any)
	asOf, _ := book[extension.FieldMovedAsOf].(time.Time)
	if asOf.IsZero() || !asOf.Equal(out.AsOf) || out.Committed.Before(asOf) {
		t.Errorf("moved_as_of %v, outcome %v, committed %v; want the move's read time, before its commit", asOf, out.AsOf, out.Committed)
	}
	if left := shardsOf(t, c, doc); !slices.Equal(left, []string{"4444-zero", "9999-odd"}) {
		t.Errorf("left %q; want the odd shard, and the one of zeros, which has nothing to move", left)
	}

	again, err := m.Move(ctx, doc, asOf)
	if err != nil || again.Wait != 0 || !again.AsOf.Equal(asOf) {
		t.Errorf("a move for a write it covers: %+v, %v; want covered", again, err)
	}
	put(t, c, doc+"/_counter_shards_/7f3a-client-1", map[string]any{"likes": firestore.Increment(1)})
	later, err := m.Move(ctx, doc, time.Now())
	if err != nil || later.Wait <= 0 || later.Wait > time.Hour || later.Shards != 0 {
		t.Errorf("a move within the spacing: %+v, %v; want it to wait", later, err)
	}
	if s2, _ := c.Doc(doc).Get(ctx); !s2.UpdateTime.Equal(snap.UpdateTime) {
		t.Error("the post was written by a move that covered nothing new, or waited")
	}
}

// TestMoveCreatesADocumentOfNoCollectionCounted: the extension counts on
// a document that need not exist; a move makes it, as the extension's
// workers do. A document of a collection TALLY_COUNTS declares is never
// made: its shards are left, and the move says so.
func TestMoveCreatesADocumentOfNoCollectionCounted(t *testing.T) {
	c := emulatortest.Client(t)
	ctx := context.Background()
	page := "pages/" + emulatortest.ID(t)
	put(t, c, page+"/_counter_shards_/c1", map[string]any{"visits": int64(3)})
	l := postsLayout(t)
	m := extension.NewMover(c, l, extension.MoverOptions{Counters: declare(t, "pages:visits;posts:likes")})
	if _, err := m.MoveNow(ctx, page); err != nil {
		t.Fatal(err)
	}
	if snap, err := c.Doc(page).Get(ctx); err != nil || snap.Data()["visits"] != int64(3) {
		t.Errorf("the page: %v, %v; want it made with visits 3", snap, err)
	}

	post := "posts/" + emulatortest.ID(t)
	put(t, c, post+"/_counter_shards_/c1", map[string]any{"likes": int64(3)})
	out, err := m.MoveNow(ctx, post)
	if err != nil || !out.Gone {
		t.Errorf("a move into a counted post that is not there: %+v, %v; want Gone", out, err)
	}
	if _, err := c.Doc(post).Get(ctx); status.Code(err) != codes.NotFound {
		t.Errorf("the post was made: %v", err)
	}
	if left := shardsOf(t, c, post); len(left) != 1 {
		t.Errorf("left %q; want the shard", left)
	}
}

// TestMoveIntoACountedField: a post whose likes TALLY_COUNTS declares
// takes likes from tally's Increment (its tally shards) and from the
// extension's clients. A move adds the clients' likes to the post and to
// its tally shard in one commit, so that a fold after it, which sums the
// tally shards, writes the same likes; a fraction of a like is left.
func TestMoveIntoACountedField(t *testing.T) {
	c := emulatortest.Client(t)
	ctx := context.Background()
	l := postsLayout(t)
	post := "posts/" + emulatortest.ID(t)
	put(t, c, post, map[string]any{"title": "hello"})
	folder := fold.NewFolder(c, l, 0)
	if _, err := folder.Fold(ctx, post); err != nil {
		t.Fatal(err)
	}
	life := emulatortest.Life(t, l, c, post)
	if _, err := l.Shard(c, post, life, 1).Set(ctx, map[string]any{"likes": firestore.Increment(4)}, firestore.MergeAll); err != nil {
		t.Fatal(err)
	}
	put(t, c, post+"/_counter_shards_/c1", map[string]any{"likes": int64(3), "claps": int64(2)})
	put(t, c, post+"/_counter_shards_/c2", map[string]any{"likes": 0.5})
	out, err := extension.NewMover(c, l, extension.MoverOptions{Counters: declare(t, "posts:likes,claps")}).MoveNow(ctx, post)
	if err != nil {
		t.Fatal(err)
	}
	if out.Shards != 1 || out.Left["c2"] == nil {
		t.Errorf("moved %d, left %v; want c1 moved and c2 left", out.Shards, out.Left)
	}
	if _, err := folder.Fold(ctx, post); err != nil {
		t.Fatal(err)
	}
	snap, err := c.Doc(post).Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d := snap.Data(); d["likes"] != int64(7) || d["claps"] != int64(2) {
		t.Errorf("the post after a move and a fold: likes %v, claps %v; want 4 of tally's and 3 of the clients', and their 2 claps", d["likes"], d["claps"])
	}
}

// declare parses TALLY_EXTENSION_COUNTERS.
func declare(t *testing.T, s string) extension.Counters {
	t.Helper()
	cs, err := extension.ParseCounters(s)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// postsLayout counts likes on posts.
func postsLayout(t *testing.T) core.Layout {
	t.Helper()
	l := core.Default()
	var err error
	if l.Docs, err = core.ParseCounts("posts:likes"); err != nil {
		t.Fatal(err)
	}
	return l
}
