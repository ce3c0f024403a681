package stack

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
)

// TestQuietPostsWithWindows runs TALLY_QUIET_IN_DOCUMENT on posts that
// keep a day's window of their views, a trend of both counts and a rank
// by likes, through the whole local stack: once a fold has made the
// post's window, a view of the quiet post is written into it, its window
// and trend with it; a like, ranked, goes to a shard; bursts of both are
// folded. The counts end exact, the day's window holds every view of the
// day, the trend is up, and the post is on the board at its likes.
func TestQuietPostsWithWindows(t *testing.T) {
	t.Parallel()
	s, fs, sums, id := quietPost(t, "posts:likes,views,views_day=views per day,hot=trend(likes + views/10, 6h),rank(likes)", nil)
	ctx, doc := context.Background(), fs.Doc("posts/"+id)
	day := time.Now().UTC().Truncate(24 * time.Hour)
	acked := map[string]int64{}
	var mu sync.Mutex
	step := func(field string) (inDocument bool) {
		t.Helper()
		code, body := increment(t, s, fmt.Sprintf(`{"counter":"posts/%s","field":%q}`, id, field))
		var a struct {
			InDocument bool `json:"in_document"`
		}
		if code != http.StatusOK || json.Unmarshal([]byte(body), &a) != nil {
			t.Errorf("a step of %s: %d %s", field, code, body)
			return false
		}
		mu.Lock()
		acked[field]++
		mu.Unlock()
		return a.InDocument
	}
	if step("views") {
		t.Error("the first view of a post whose window no fold has made: written into the post")
	}
	waitSettled(t, sums, doc, "posts/"+id, acked, 0)
	var data map[string]any
	for round := range 3 {
		time.Sleep(docsWindow) // the post is quiet
		if !step("views") && round == 0 {
			t.Error("a view of a quiet post whose window is made: sent to a shard")
		}
		if step("likes") {
			t.Error("a like, ranked: written into the post")
		}
		var wg sync.WaitGroup
		for w := range 8 {
			wg.Go(func() {
				for i := range 4 {
					step([]string{"likes", "views"}[(w+i)%2])
				}
			})
		}
		wg.Wait()
		data = waitSettled(t, sums, doc, "posts/"+id, acked, 0)
	}
	if own, _ := data[core.FieldBookkeeping].(map[string]any)[core.FieldOwn].(map[string]any); own["views"] == nil || own["likes"] != nil {
		t.Errorf("own part %v; want views written into the post, no likes", own)
	}
	if hot, _ := data["hot"].(float64); hot <= 0 {
		t.Errorf("hot = %v; want it up", data["hot"])
	}
	if time.Now().UTC().Truncate(24 * time.Hour).Equal(day) { // else the day turned meanwhile, and the window is of the new one
		emulatortest.Until(t, "the day's window to hold every view", func() (any, bool) {
			snap, err := doc.Get(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return snap.Data()["views_day"], snap.Data()["views_day"] == snap.Data()["views"]
		})
	}
	r, err := sums.RankAfter(ctx, "posts/"+id, "likes", time.Now())
	if likes, _ := data["likes"].(int64); err != nil || r.Rank < 1 || r.Of < 1 || r.Int == nil || *r.Int != likes {
		t.Errorf("place %+v, %v; want the post on its board, at its %d likes", r, err, likes)
	}
}
