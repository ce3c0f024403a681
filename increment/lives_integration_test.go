package increment

import (
	"context"
	"testing"
	"time"

	"github.com/tallycounters/tally/counter"
	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/fold"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/testkit/layouttest"
)

// TestCreatedAgainStartsAtZero: a post gets 4 likes (3 steps and alice's
// vote); the app deletes it; an Increment instance that still holds the
// post in its cache answers 5 more likes and bob's vote 200, as it counts
// them for the post as it was; the app creates the post again. The post
// created again counts from nothing: its first fold leaves its likes at
// the app's 0, a view makes views 1, and alice's like counts again. A
// reconcile of everything keeps what was kept for the deleted post until
// an hour after the post was created again: a Rollup may move what an
// Increment's stale cache gave that life into the new one until then.
func TestCreatedAgainStartsAtZero(t *testing.T) {
	l := postsLayout(t)
	stale, c, _, host := signedIn(t, Config{Layout: layouttest.Public(l), CacheTTL: time.Hour})
	fresh, _, _, _ := signedIn(t, Config{Layout: layouttest.Public(l)})
	alice, bob := user(t, host), user(t, host)
	ctx := context.Background()
	name := "posts/" + emulatortest.ID(t)
	folder := fold.NewFolder(c, l, 50*time.Millisecond)
	counts := func() map[string]any {
		t.Helper()
		if _, err := folder.Fold(ctx, name); err != nil {
			t.Fatal(err)
		}
		snap, err := c.Doc(name).Get(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return snap.Data()
	}
	step := func(h *Handler, token, body string) Response {
		t.Helper()
		code, r, raw := call(h, token, body)
		if code != 200 {
			t.Fatalf("%s: %d %s", body, code, raw)
		}
		return r
	}
	like, likeVote := `{"counter":"`+name+`","field":"likes"}`, `{"counter":"`+name+`","field":"likes","vote":true}`

	if _, err := c.Doc(name).Create(ctx, map[string]any{"title": "first"}); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		step(stale, alice.IDToken, like)
	}
	step(stale, alice.IDToken, likeVote)
	first := emulatortest.Life(t, l, c, name)
	if got := counts()["likes"]; got != int64(4) {
		t.Fatalf("likes = %v, want 4", got)
	}

	if _, err := c.Doc(name).Delete(ctx); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		step(stale, alice.IDToken, like) // its cache still holds the post
	}
	if r := step(stale, bob.IDToken, likeVote); !r.Changed {
		t.Errorf("bob's vote through the instance that cached the post: %+v", r)
	}

	if _, err := c.Doc(name).Create(ctx, map[string]any{"title": "again", "likes": 0}); err != nil {
		t.Fatal(err)
	}
	if got := counts(); got["likes"] != int64(0) {
		t.Errorf("the post created again: %v; want likes 0, nothing of its earlier life", got)
	}
	step(fresh, alice.IDToken, `{"counter":"`+name+`","field":"views"}`)
	if r := step(fresh, alice.IDToken, likeVote); !r.Changed {
		t.Errorf("alice's like on the post created again: %+v; want it counted, her vote was of the earlier life", r)
	}
	got := counts()
	if got["likes"] != int64(1) || got["views"] != int64(1) {
		t.Errorf("the post created again: %v; want likes 1, views 1", got)
	}
	second := emulatortest.Life(t, l, c, name)
	if bk, _ := got[core.FieldBookkeeping].(map[string]any); bk[core.FieldLife] != second || second == first {
		t.Errorf("_tally = %v; want its life %s (the earlier one was %s)", bk, second, first)
	}

	admin := counter.New(c, counter.Options{Layout: layouttest.Public(l), Spacing: 50 * time.Millisecond})
	if err := admin.ReconcileAll(ctx, func(counter.Drift, error) {}); err != nil {
		t.Fatal(err)
	}
	lives, err := l.Lives(c, name).DocumentRefs(ctx).GetAll()
	if err != nil {
		t.Fatal(err)
	}
	// the earlier life is kept until no move follows it (package lives)
	if len(lives) != 2 || lives[0].ID != first && lives[1].ID != first {
		t.Errorf("after reconciling everything, the lives kept are %v; want %s and %s", lives, first, second)
	}
}
