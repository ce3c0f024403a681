package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tallycounters/tally/counter"
	"github.com/tallycounters/tally/internal/extension"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/tools/stack"
	"github.com/tallycounters/tally/setup"
)

// TestExtensionClients: 200 clients of the firestore-counter extension's
// protocol, the Firebase JS SDK standing in for its clients, each on a
// shard of its own, add 2 likes and 2 stats.views each to one post at
// once, against serve's stack with TALLY_EXTENSION_COUNTERS set to
// posts:likes,stats.views and the rules 'tally rules' prints for it. Every
// client's own view (the post plus its shard and partials, in sync)
// comes to all 400 of each, and, once the server has confirmed it, is
// never above what was sent; the post
// holds 400 likes, counted by tally too: today's, its trend, and its
// place on the board of likes, above a post with one like.
func TestExtensionClients(t *testing.T) {
	t.Parallel()
	node := needNode(t)
	s := startWith(t, stack.Options{}, setup.EnvExtension, "posts:likes,stats.views",
		setup.EnvCounts, "posts:likes,likes_today=likes per day,hot=trend(likes, 6h),rank(likes)")
	fs := emulatortest.ClientAt(t, s.EmulatorHost, stack.DefaultProject)
	ctx := context.Background()
	post, other := "posts/"+emulatortest.ID(t), "posts/other-"+emulatortest.ID(t)
	for _, p := range []string{post, other} {
		if _, err := fs.Doc(p).Create(ctx, map[string]any{"title": "hello", "likes": int64(0)}); err != nil {
			t.Fatal(err)
		}
	}
	resp, err := http.Post(s.FunctionsURL+"/Increment", "application/json", strings.NewReader(`{"counter":"`+other+`","field":"likes"}`))
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("a like of the other post: %v %v", resp, err)
	}
	resp.Body.Close()
	out := runE2E(t, node, "extension.mjs", "EXTENSION_CONFIG", map[string]any{"project": stack.DefaultProject, "firestore": s.EmulatorHost,
		"doc": post, "clients": 200, "each": 2, "fields": []string{"likes", "stats.views"}})
	var saw struct {
		Views             []map[string]int64
		Above, AboveShown int64
		Snapshots         int
	}
	if err := json.Unmarshal(out, &saw); err != nil {
		t.Fatalf("the clients said %q: %v", out, err)
	}
	for i, v := range saw.Views {
		if v["likes"] != 400 || v["stats.views"] != 400 {
			t.Errorf("client %d's last view: %v; want 400 of each", i, v)
		}
	}
	if saw.Above != 0 {
		t.Errorf("a client's view that the server confirmed was %d above the increments sent", saw.Above)
	}
	// A press the SDK shows as pending, which the server has moved into
	// the post already, shows twice until the SDK hears it answered: the
	// extension's protocol does so whoever moves the shards.
	t.Logf("%d snapshots; the most a view the SDK showed with a press pending was above the increments sent: %d", saw.Snapshots, saw.AboveShown)
	var got map[string]any
	emulatortest.Until(t, "the post's likes and today's", func() (any, bool) {
		snap, err := fs.Doc(post).Get(ctx)
		if err != nil {
			return err, false
		}
		got = snap.Data()
		return got, got["likes"] == int64(400) && got["likes_today"] == int64(400)
	})
	if stats, _ := got["stats"].(map[string]any); stats["views"] != int64(400) {
		t.Errorf("the post's stats: %v; want views 400", got["stats"])
	}
	if hot, _ := got["hot"].(float64); hot <= 0 {
		t.Errorf("the post's trend %v; want the log of 400 weighed likes", got["hot"])
	}
	admin := counter.New(fs, counter.Options{Layout: s.Config().Layout})
	place, err := admin.RankAfter(ctx, post, "likes", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if place.Rank != 1 {
		t.Errorf("the post's place: %+v; want #1, above the post with one like", place)
	}
	if left, err := fs.Doc(post).Collection(extension.Collection).DocumentRefs(ctx).GetAll(); err != nil || len(left) != 0 {
		t.Errorf("%d shards left (%v); want none", len(left), err)
	}
}
