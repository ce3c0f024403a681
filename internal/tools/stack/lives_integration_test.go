package stack

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/tallycounters/tally/internal/testkit/emulatortest"
)

// TestCreatedAgainCountsWhatCameAfter: a post gets 3 likes, the app
// deletes it and creates it again, and 2 more likes reach an Increment
// whose cache (an hour long here, 10 s by default) still holds the post's
// first life, so they are written to that life's shards. They committed
// after the post's new life began, so they are its likes: Rollup, told of
// their shard writes by the emulator, moves them into it, and the post
// shows 2, and stays at 2; on four shards as on one.
func TestCreatedAgainCountsWhatCameAfter(t *testing.T) {
	t.Parallel()
	for _, shards := range []string{"1", "4"} {
		t.Run("shards="+shards, func(t *testing.T) {
			t.Parallel()
			paths := emulatortest.RequirePaths(t)
			s, fs := startConfig(t, paths, envConfig(t, map[string]string{
				"TALLY_COUNTS": "posts:likes", "TALLY_ROLLUP_WINDOW": docsWindow.String(),
				"TALLY_SHARD_CACHE_TTL": "1h", "TALLY_AUTO_GROW": "false", "TALLY_DEFAULT_SHARDS": shards,
			}))
			ctx := context.Background()
			doc := fs.Doc("posts/again")
			like := func() {
				t.Helper()
				if code, body := increment(t, s, `{"counter":"posts/again","field":"likes"}`); code != http.StatusOK {
					t.Fatalf("like: %d %s", code, body)
				}
			}
			if _, err := doc.Create(ctx, map[string]any{"title": "first"}); err != nil {
				t.Fatal(err)
			}
			for range 3 {
				like()
			}
			waitCounts(t, doc, map[string]int64{"likes": 3})
			if _, err := doc.Delete(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := doc.Create(ctx, map[string]any{"title": "again"}); err != nil {
				t.Fatal(err)
			}
			for range 2 {
				like()
			}
			waitCounts(t, doc, map[string]int64{"likes": 2})
			waitDelivered(t, s)
			snap, err := doc.Get(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got := snap.Data()["likes"]; got != int64(2) {
				t.Errorf("likes = %v once every event was answered, want the 2 made after the post was created again", got)
			}
			fmt.Fprintf(t.Output(), "likes %v after 3, a delete, a creation and 2 through a stale cache\n", snap.Data()["likes"])
		})
	}
}
