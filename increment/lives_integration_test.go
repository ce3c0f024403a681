package increment

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tallycounters/tally/counter"
	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/fold"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/testkit/layouttest"
)

// TestCreatedAgainStartsAtZero: a post gets 4 likes (3 steps and alice's
// vote); the app deletes it; an Increment instance that still holds the
// post in its cache answers 5 more likes and bob's vote 404, and writes
// nothing (each commit verifies the post); the app creates the post
// again. The post created again counts from nothing: its first fold
// leaves its likes at the app's 0, a view makes views 1, and alice's like
// counts again. A reconcile of everything keeps what was kept for the
// deleted post until an hour after the post was created again: a Rollup
// may move what an Increment's stale cache gave that life into the new
// one until then.
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
	for _, body := range []string{like, like, like, like, like, likeVote} {
		// its cache still holds the post
		if code, _, raw := call(stale, bob.IDToken, body); code != 404 {
			t.Errorf("%s of the deleted post: %d %s; want 404", body, code, raw)
		}
	}
	if got := lifeSums(t, c, l, name, first); got["likes"] != 4 {
		t.Errorf("the deleted post's shards hold %v likes; want the 4 it had", got["likes"])
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

// TestDeletedDocumentWritesNothing: an Increment instance and a Go client
// that both hold a post in their caches (for an hour) see it deleted.
// Every step of it then answers 404, naming the post, and writes nothing:
// a like, a keyed like, a vote and its taking back, 30 likes at once (one
// group commit), the Go client's Add. Once the post is created again, the
// same instance's like counts on it.
func TestDeletedDocumentWritesNothing(t *testing.T) {
	l := postsLayout(t)
	stale, c, _, host := signedIn(t, Config{Layout: layouttest.Public(l), CacheTTL: time.Hour})
	client := counter.New(c, counter.Options{Layout: layouttest.Public(l), ShardCacheTTL: time.Hour})
	alice := user(t, host)
	ctx := context.Background()
	name := "posts/" + emulatortest.ID(t)
	like := `{"counter":"` + name + `","field":"likes"}`
	vote := func(v bool) string { return fmt.Sprintf(`{"counter":%q,"field":"likes","vote":%t}`, name, v) }
	if _, err := c.Doc(name).Create(ctx, map[string]any{"title": "first"}); err != nil {
		t.Fatal(err)
	}
	if code, _, raw := call(stale, alice.IDToken, like); code != 200 {
		t.Fatalf("a like: %d %s", code, raw)
	}
	if err := client.Add(ctx, name, "likes", 1); err != nil {
		t.Fatal(err)
	}
	life := emulatortest.Life(t, l, c, name)
	if _, err := c.Doc(name).Delete(ctx); err != nil {
		t.Fatal(err)
	}

	refused := func(what, body string, header ...string) {
		t.Helper()
		code, _, raw := call(stale, alice.IDToken, body, header...)
		if code != 404 || !strings.Contains(raw, name+" does not exist") {
			t.Errorf("%s of the deleted post: %d %s; want 404 naming it", what, code, raw)
		}
	}
	refused("a like", like)
	refused("a keyed like", like, "Idempotency-Key", "k-"+emulatortest.ID(t))
	refused("a vote", vote(true))
	refused("a vote taken back", vote(false))
	var wg sync.WaitGroup
	for range 30 {
		wg.Go(func() { refused("one of 30 likes at once", like) })
	}
	wg.Wait()
	if err := client.Add(ctx, name, "likes", 1); !errors.Is(err, counter.ErrNotFound) {
		t.Errorf("the Go client's Add to the deleted post: %v; want ErrNotFound", err)
	}

	if got := lifeSums(t, c, l, name, life); got["likes"] != 2 {
		t.Errorf("the deleted post's shards hold %v likes; want the 2 counted before the delete", got["likes"])
	}
	if _, err := l.Voter(c, name, life, "likes", alice.UID).Get(ctx); status.Code(err) != codes.NotFound {
		t.Errorf("a voter's document was written for the deleted post: %v", err)
	}
	if all, err := c.CollectionGroup(core.KeysCollection).Documents(ctx).GetAll(); err != nil {
		t.Fatal(err)
	} else {
		for _, k := range all {
			if strings.Contains(k.Ref.Path, name+"/") {
				t.Errorf("a key's record was written for the deleted post: %s", k.Ref.Path)
			}
		}
	}

	if _, err := c.Doc(name).Create(ctx, map[string]any{"title": "again"}); err != nil {
		t.Fatal(err)
	}
	if code, _, raw := call(stale, alice.IDToken, like); code != 200 {
		t.Fatalf("a like of the post created again: %d %s", code, raw)
	}
	if got := fieldSums(t, c, l, name); got["likes"] != 1 {
		t.Errorf("the post created again holds %v likes in its shards; want 1", got["likes"])
	}
}

// TestVotesAcrossLives: an instance that holds a post in its cache for an
// hour counts alice's and bob's likes; the app deletes the post and
// creates it again. Within the cache's age, alice taking her like back
// changes nothing (she has not liked the post as it is now: never a
// negative count), and bob's like counts as his first (never "already
// counted" for a like of the earlier post); alone and in one group commit
// alike. The post created again holds bob's like alone.
func TestVotesAcrossLives(t *testing.T) {
	l := postsLayout(t)
	stale, c, _, host := signedIn(t, Config{Layout: layouttest.Public(l), CacheTTL: time.Hour})
	ctx := context.Background()
	for _, together := range []bool{false, true} {
		alice, bob := user(t, host), user(t, host)
		name := "posts/" + emulatortest.ID(t)
		vote := func(v bool) string { return fmt.Sprintf(`{"counter":%q,"field":"likes","vote":%t}`, name, v) }
		answer := func(token, body string) Response {
			t.Helper()
			code, r, raw := call(stale, token, body)
			if code != 200 {
				t.Fatalf("%s: %d %s", body, code, raw)
			}
			return r
		}
		if _, err := c.Doc(name).Create(ctx, map[string]any{"title": "first"}); err != nil {
			t.Fatal(err)
		}
		answer(alice.IDToken, vote(true))
		answer(bob.IDToken, vote(true))
		if _, err := c.Doc(name).Delete(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Doc(name).Create(ctx, map[string]any{"title": "again", "likes": 0}); err != nil {
			t.Fatal(err)
		}
		var unlike, like Response
		if together {
			var wg sync.WaitGroup
			wg.Go(func() { unlike = answer(alice.IDToken, vote(false)) })
			wg.Go(func() { like = answer(bob.IDToken, vote(true)) })
			wg.Wait()
		} else {
			unlike, like = answer(alice.IDToken, vote(false)), answer(bob.IDToken, vote(true))
		}
		if unlike.Changed {
			t.Errorf("together %t: alice took back a like of the earlier post: %+v; want nothing changed", together, unlike)
		}
		if !like.Changed {
			t.Errorf("together %t: bob's like of the post created again: %+v; want it counted, his first", together, like)
		}
		if got := fieldSums(t, c, l, name); got["likes"] != 1 {
			t.Errorf("together %t: the post created again holds %v likes in its shards; want bob's 1", together, got["likes"])
		}
	}
}
