package extension_test

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/extension"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
)

// TestMovesTouchOnlyWhatIsDeclared: shards under documents that no
// declaration holds (a document of another collection, a comment below a
// declared post, a voter record and a shard of tally's own) are moved
// nowhere, and no document is made or updated for them, whatever wrote
// them; under a declared document, a shard holding an undeclared field,
// a fraction, a number past what a count can hold, or of an id no client
// has, is left, and why is said; a takeover leaves and reports the same.
func TestMovesTouchOnlyWhatIsDeclared(t *testing.T) {
	c := emulatortest.Client(t)
	ctx := context.Background()
	id := emulatortest.ID(t)
	pages, posts := "pages"+id, "posts"+id
	ext := declare(t, pages+":likes;"+posts+":likes")
	post := posts + "/p1"
	put(t, c, post, map[string]any{"title": "hello"})
	outside := []string{
		"admins" + id + "/mallory",
		post + "/comments/evil",
		post + "/lives/1/voters/likes:u1",
		post + "/lives/1/shards/0",
	}
	for _, doc := range outside {
		put(t, c, doc+"/_counter_shards_/x1", map[string]any{"likes": int64(1)})
	}
	page := pages + "/home"
	put(t, c, page, map[string]any{"likes": int64(5)})
	odd := map[string]map[string]any{
		"undeclared":  {"views": int64(1)},
		"not-a-count": {"likes": int64(1), "owner": "x"},
		"fraction":    {"likes": 0.5},
		"huge":        {"likes": 1.7e308},
		"\t\n":        {"likes": int64(1)},
	}
	for shard, data := range odd {
		put(t, c, page+"/_counter_shards_/"+shard, data)
	}
	put(t, c, page+"/_counter_shards_/good", map[string]any{"likes": int64(2)})

	m := extension.NewMover(c, core.Default(), extension.MoverOptions{Counters: ext})
	for _, doc := range outside {
		out, err := m.MoveNow(ctx, doc)
		if err != nil || !out.Undeclared || out.Shards != 0 {
			t.Errorf("a move into %s: %+v, %v; want nothing, undeclared", doc, out, err)
		}
		if _, err := c.Doc(doc).Get(ctx); status.Code(err) != codes.NotFound {
			t.Errorf("%s was made: %v", doc, err)
		}
	}
	out, err := m.MoveNow(ctx, page)
	if err != nil || out.Shards != 1 || len(out.Left) != len(odd) {
		t.Fatalf("a move into %s: moved %d, left %v (%v); want the good shard moved and the %d others left", page, out.Shards, out.Left, err, len(odd))
	}
	for shard, why := range out.Left {
		t.Logf("left %q: %v", shard, why)
	}
	if snap, err := c.Doc(page).Get(ctx); err != nil || snap.Data()["likes"] != int64(7) {
		t.Errorf("%s: %v, %v; want likes 5 + 2", page, snap.Data(), err)
	}
	if snap, err := c.Doc(post).Get(ctx); err != nil || len(snap.Data()) != 1 {
		t.Errorf("the post was written: %v, %v", snap.Data(), err)
	}

	r, err := extension.Takeover(ctx, c, core.Default(), extension.TakeoverOptions{Counters: ext, KeepState: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range outside {
		why := r.Left[doc+"/_counter_shards_/x1"]
		if why == nil || !strings.Contains(why.Error(), "declares") {
			t.Errorf("the takeover's report of %s's shard: %v; want it left, as undeclared", doc, why)
		}
		if _, err := c.Doc(doc).Get(ctx); status.Code(err) != codes.NotFound {
			t.Errorf("the takeover made %s: %v", doc, err)
		}
	}
	for shard := range odd {
		if r.Left[page+"/_counter_shards_/"+shard] == nil {
			t.Errorf("the takeover's report: %s's %q not left", page, shard)
		}
	}
}

// TestMovesStayWithinInt64: a shard whose amount the document's count
// cannot take without passing int64 (or, for a count TALLY_COUNTS
// declares, tally's edge) is left where it is, never deleted with its
// amount lost; a dry run says so; what fits is moved.
func TestMovesStayWithinInt64(t *testing.T) {
	c := emulatortest.Client(t)
	ctx := context.Background()
	id := emulatortest.ID(t)
	page := "pages" + id + "/y"
	put(t, c, page, map[string]any{"likes": int64(math.MaxInt64 - 3)})
	put(t, c, page+"/_counter_shards_/a", map[string]any{"likes": int64(2)})
	put(t, c, page+"/_counter_shards_/b", map[string]any{"likes": int64(10)})
	ext := declare(t, "pages"+id+":likes;posts:likes")

	dry, err := extension.Takeover(ctx, c, core.Default(), extension.TakeoverOptions{Counters: ext, DryRun: true, KeepState: true})
	if err != nil {
		t.Fatal(err)
	}
	if why := dry.Left[page+"/_counter_shards_/b"]; why == nil || !strings.Contains(why.Error(), "would pass") {
		t.Errorf("the dry run leaves b: %v; want it left, saying why", why)
	}
	out, err := extension.NewMover(c, core.Default(), extension.MoverOptions{Counters: ext}).MoveNow(ctx, page)
	if err != nil || out.Shards != 1 || out.Left["b"] == nil {
		t.Fatalf("the move: %+v, %v; want a moved and b left", out, err)
	}
	if snap, err := c.Doc(page).Get(ctx); err != nil || snap.Data()["likes"] != int64(math.MaxInt64-1) {
		t.Errorf("%s: %v, %v; want likes 2^63 - 2", page, snap.Data(), err)
	}
	if left := shardsOf(t, c, page); len(left) != 1 || left[0] != "b" {
		t.Errorf("left %q; want b, with its 10", left)
	}

	post := "posts/" + id
	put(t, c, post, map[string]any{"likes": core.CountEdge - 1})
	put(t, c, post+"/_counter_shards_/c1", map[string]any{"likes": int64(2)})
	out, err = extension.NewMover(c, postsLayout(t), extension.MoverOptions{Counters: ext}).MoveNow(ctx, post)
	if err != nil || out.Shards != 0 || out.Left["c1"] == nil {
		t.Errorf("a move past tally's edge of a counted post: %+v, %v; want c1 left", out, err)
	}
}

// TestMovesHoldAShardItsClientJustWrote: a client's shard written within
// the quiet time is held, with the document as of just before its first
// write; past the quiet time it is moved. A shard of zeros has nothing to
// move: no write of the document for it (a takeover tidies it away).
func TestMovesHoldAShardItsClientJustWrote(t *testing.T) {
	c := emulatortest.Client(t)
	ctx := context.Background()
	ext := declare(t, "posts:likes")
	doc := "posts/" + emulatortest.ID(t)
	put(t, c, doc, map[string]any{"likes": int64(0)})
	put(t, c, doc+"/_counter_shards_/c1", map[string]any{"likes": int64(3)})
	shard, err := c.Doc(doc + "/_counter_shards_/c1").Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := c.Doc(doc).Get(ctx)
	out, err := extension.NewMover(c, core.Default(), extension.MoverOptions{Counters: ext, Quiet: time.Hour}).MoveNow(ctx, doc)
	if err != nil || out.Shards != 0 || out.Held["c1"].IsZero() || !out.AsOf.Before(shard.CreateTime) {
		t.Fatalf("a move within the quiet time: %+v, %v; want c1 held, as of before it", out, err)
	}
	if after, _ := c.Doc(doc).Get(ctx); !after.UpdateTime.Equal(before.UpdateTime) {
		t.Error("the post was written by a move that held its one shard")
	}
	out, err = extension.NewMover(c, core.Default(), extension.MoverOptions{Counters: ext, Quiet: time.Microsecond}).MoveNow(ctx, doc)
	if err != nil || out.Shards != 1 || len(out.Held) != 0 {
		t.Fatalf("a move past the quiet time: %+v, %v; want c1 moved", out, err)
	}

	put(t, c, doc+"/_counter_shards_/c2", map[string]any{"likes": int64(0)})
	moved, _ := c.Doc(doc).Get(ctx)
	out, err = extension.NewMover(c, core.Default(), extension.MoverOptions{Counters: ext}).MoveNow(ctx, doc)
	if err != nil || out.Shards != 0 || out.AsOf.Before(moved.ReadTime) {
		t.Errorf("a move of a shard of zeros: %+v, %v; want nothing moved, covered", out, err)
	}
	if after, _ := c.Doc(doc).Get(ctx); !after.UpdateTime.Equal(moved.UpdateTime) {
		t.Error("the post was written for a shard of zeros")
	}
	if _, err := extension.Takeover(ctx, c, core.Default(), extension.TakeoverOptions{Counters: ext, KeepState: true}); err != nil {
		t.Fatal(err)
	}
	if left := shardsOf(t, c, doc); len(left) != 0 {
		t.Errorf("after the takeover %q are left; want the shard of zeros taken", left)
	}
	if snap, err := c.Doc(doc).Get(ctx); err != nil || snap.Data()["likes"] != int64(3) {
		t.Errorf("the post: %v, %v; want likes 3", snap.Data(), err)
	}
}
