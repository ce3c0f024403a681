package stack

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/counter"
	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/listen"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
)

// TestQuietDocumentsCountedInThemselves runs TALLY_QUIET_IN_DOCUMENT
// through the whole local stack, with the emulator's own trigger
// delivery: a like of a post quiet for the window is written into the
// post itself, with no shard and no event; bursts go to shards and are
// folded, keyless likes among them into the post when it has been quiet
// for the window; the app edits the post meanwhile. The counts end
// exact, the app's title is kept, and no two of tally's writes of the post
// are within the window.
func TestQuietDocumentsCountedInThemselves(t *testing.T) {
	t.Parallel()
	s, fs, sums, id := quietPost(t, "posts:likes,views", map[string]string{"TALLY_AUTO_GROW": "false", "TALLY_DEFAULT_SHARDS": "4"})
	ctx, doc := context.Background(), fs.Doc("posts/"+id)
	tallyWrites := watchTallyWrites(t, doc)
	waitDelivered(t, s) // its creation's event, which Rollup answers, writing nothing more after
	acked := map[string]int64{}
	var unsure int64       // keyless likes answered 504: counted or not
	var itself []time.Time // the commit times of likes written into the post
	var data map[string]any
	for round := range 3 {
		time.Sleep(docsWindow) // the post is quiet: the first like is written into it
		switch code, body := post(t, s, fmt.Sprintf(`{"counter":"posts/%s","field":"likes"}`, id)); code {
		case http.StatusOK:
			acked["likes"]++
			var a struct {
				Shard      int
				Committed  time.Time
				InDocument bool `json:"in_document"`
			}
			if err := json.Unmarshal([]byte(body), &a); err != nil {
				t.Fatal(err)
			}
			if round == 0 && (!a.InDocument || a.Shard != -1) {
				t.Errorf("the first like of a post quiet for the window: %s; want it written into the post", body)
			}
			if a.InDocument {
				itself = append(itself, a.Committed)
			}
		case http.StatusGatewayTimeout:
			unsure++
		default:
			t.Fatalf("a like: %d %s", code, body)
		}
		var mu sync.Mutex
		var wg sync.WaitGroup
		for range 4 { // keyless likes, one after another: some are written into the post
			wg.Go(func() {
				for range 5 {
					code, body := post(t, s, fmt.Sprintf(`{"counter":"posts/%s","field":"likes"}`, id))
					var a struct {
						Committed  time.Time
						InDocument bool `json:"in_document"`
					}
					mu.Lock()
					switch {
					case code == http.StatusOK && json.Unmarshal([]byte(body), &a) == nil:
						acked["likes"]++
						if a.InDocument {
							itself = append(itself, a.Committed)
						}
					case code == http.StatusGatewayTimeout:
						unsure++
					default:
						t.Errorf("a like: %d %s", code, body)
					}
					mu.Unlock()
				}
			})
		}
		for w := range 16 {
			wg.Go(func() {
				for i := range 6 {
					field := []string{"likes", "views"}[(w+i)%2]
					if code, body := increment(t, s, fmt.Sprintf(`{"counter":"posts/%s","field":%q}`, id, field)); code != http.StatusOK {
						t.Errorf("increment: %d %s", code, body)
						continue
					}
					mu.Lock()
					acked[field]++
					mu.Unlock()
				}
			})
		}
		if _, err := doc.Update(ctx, []firestore.Update{{Path: "title", Value: fmt.Sprintf("v%d", round+1)}}); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		data = waitSettled(t, sums, doc, "posts/"+id, acked, unsure)
	}
	if data["title"] != "v3" {
		t.Errorf("title = %v, want the app's last edit v3", data["title"])
	}
	if own, _ := data[core.FieldBookkeeping].(map[string]any)[core.FieldOwn].(map[string]any); own["likes"] == nil {
		t.Errorf("post = %v; want the part written into it in _tally.own", data)
	}
	// The likes' times and the writes the listener saw (one it missed
	// only widens a gap), each as tally's write set _tally.written.
	ws := mergeTimes(tallyWrites(), itself)
	t.Logf("%d tally writes seen, %d of them likes written into the post; %v acknowledged, %d unsure", len(ws), len(itself), acked, unsure)
	for i := 1; i < len(ws); i++ {
		if gap := ws[i].Sub(ws[i-1]); gap < docsWindow {
			t.Errorf("tally writes %d and %d of the post are %v apart, within the %v window", i-1, i, gap, docsWindow)
		}
	}
}

// quietPost starts the stack with TALLY_QUIET_IN_DOCUMENT, counts (and
// more settings), the docs' window and a short shard cache, and makes a
// post of posts: the stack, a client of its emulator and one that sums
// counts, and the post's id.
func quietPost(t *testing.T, counts string, more map[string]string) (*Stack, *firestore.Client, *counter.Client, string) {
	t.Helper()
	env := map[string]string{"TALLY_COUNTS": counts, "TALLY_ROLLUP_WINDOW": docsWindow.String(), "TALLY_SHARD_CACHE_TTL": "300ms", "TALLY_QUIET_IN_DOCUMENT": "true"}
	maps.Copy(env, more)
	s, fs := startConfig(t, emulatortest.RequirePaths(t), envConfig(t, env))
	id := emulatortest.ID(t)
	if _, err := fs.Doc("posts/"+id).Create(context.Background(), map[string]any{"title": "v0"}); err != nil {
		t.Fatal(err)
	}
	return s, fs, counter.New(fs, counter.Options{Layout: s.Config().Layout, Spacing: docsWindow}), id
}

// waitSettled reads the post name until each count is what its shards and
// its own part sum to (c's Sum), and that is acked's, give or take the
// unsure likes; or fails after the liveness bound. It returns the post's
// data.
func waitSettled(t *testing.T, c *counter.Client, doc *firestore.DocumentRef, name string, acked map[string]int64, unsure int64) map[string]any {
	t.Helper()
	var data map[string]any
	emulatortest.Until(t, fmt.Sprintf("%s to hold %v (+%d likes unsure)", name, acked, unsure), func() (any, bool) {
		snap, err := doc.Get(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		data = snap.Data()
		for f, n := range acked {
			got, _ := data[f].(int64)
			sum, err := c.Sum(context.Background(), name, f)
			if err != nil {
				t.Fatal(err)
			}
			if got != sum || got < n || f == "likes" && got > n+unsure || f != "likes" && got != n {
				return data, false
			}
		}
		return data, true
	})
	return data
}

// watchTallyWrites listens to doc until the test ends, and returns what
// gives the time each of tally's writes of it seen so far set in
// _tally.written (tally's writes set it, each to the server's time of its
// request; the app's do not), which an increment written into the post
// answers as its committed. A write the listener missed is not there.
func watchTallyWrites(t *testing.T, doc *firestore.DocumentRef) func() []time.Time {
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	var seen []time.Time
	var last time.Time
	done := make(chan struct{})
	go func() {
		defer close(done)
		for snap, err := range listen.Snapshots(ctx, doc) {
			if err != nil {
				return
			}
			bk, _ := snap.Data()[core.FieldBookkeeping].(map[string]any)
			if w, ok := bk[core.FieldWritten].(time.Time); ok && !w.Equal(last) {
				last = w
				mu.Lock()
				seen = append(seen, w)
				mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return func() []time.Time {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(seen)
	}
}
