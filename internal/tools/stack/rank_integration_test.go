package stack

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/counter"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/tools/bridge"
	"github.com/tallycounters/tally/rollup"
)

// rankCounts ranks posts by their likes.
const rankCounts = "posts:likes,rank(likes)"

// TestRankIsExact ranks posts by likes through the whole local stack: the
// emulator's own trigger delivery, with events duplicated and delayed,
// to three Rollup instances. Likes follow a Zipf-like spread, some by
// the hundred (so that posts share ranges of values), a viral post climbs
// past every other, posts are deleted (through the Go client, and by the
// app itself) and one created again; some are made with 0 likes by the app.
// Ranks
// sampled while it runs, and every post's at the end, are each 1 + the
// posts whose likes were greater at the rank's read time, read from the
// posts themselves; each cost at most 3 reads.
func TestRankIsExact(t *testing.T) {
	t.Parallel()
	emulatortest.Require(t)
	s, fs, c := startRanked(t, bridge.Faults{DuplicateRate: 0.3, DelayRate: 0.3, MaxDelay: 1500 * time.Millisecond})
	ctx := context.Background()
	const n = 40
	for i := range n {
		data := map[string]any{"title": i}
		if i%10 == 9 {
			data["likes"] = 0 // as the app may make a post: on the board from its creation's fold
		}
		if _, err := fs.Doc(fmt.Sprintf("posts/p%02d", i)).Create(ctx, data); err != nil {
			t.Fatal(err)
		}
	}
	stop := make(chan struct{})
	var sampled atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() { sampled.Store(int64(sampleRanks(t, fs, c, n, stop))) })
	like := func(i, by int) {
		if code, body := post(t, s, fmt.Sprintf(`{"counter":"posts/p%02d","field":"likes","by":%d}`, i, by)); code != http.StatusOK {
			t.Errorf("like p%02d: %d %s", i, code, body)
		}
	}
	var likes sync.WaitGroup
	for w := range 8 {
		likes.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 1))
			for range 40 {
				i := int(float64(n-1) * r.Float64() * r.Float64() * r.Float64()) // most likes to the first posts
				by := 1
				if r.IntN(5) == 0 {
					by = 97 // past 255: ranges of many values
				}
				like(i, by)
			}
		})
	}
	for range 30 { // the last post goes viral, past every other
		like(n-1, 60)
	}
	likes.Wait()
	for _, p := range []string{"posts/p05", "posts/p06"} {
		if err := c.DeleteDocument(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := fs.Doc("posts/p05").Create(ctx, map[string]any{"title": "again"}); err != nil {
		t.Fatal(err)
	}
	like(5, 2)
	waitDelivered(t, s)
	close(stop)
	wg.Wait()
	// deleted by the app itself: off the board once Rollup is told
	if _, err := fs.Doc("posts/p07").Delete(ctx); err != nil {
		t.Fatal(err)
	}
	waitDelivered(t, s)
	if err := c.SettleRanks(ctx); err != nil {
		t.Fatal(err)
	}
	ranked := 0
	for i := range n {
		doc := fmt.Sprintf("posts/p%02d", i)
		p, err := c.Rank(ctx, doc, "likes")
		if i == 6 || i == 7 {
			if !errors.Is(err, counter.ErrNotRanked) {
				t.Errorf("a deleted post: rank %+v, %v; want ErrNotRanked", p, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		checkPlace(t, fs, doc, p)
		ranked++
		if i == n-1 && p.Rank != 1 {
			t.Errorf("the viral post is #%d of %d, want #1", p.Rank, p.Of)
		}
	}
	if p, _ := c.Rank(ctx, "posts/p00", "likes"); p.Of != int64(n-2) {
		t.Errorf("the board holds %d posts, want %d (two deleted)", p.Of, n-2)
	}
	t.Logf("%d ranks checked at the end, %d while it ran", ranked, sampled.Load())
	if sampled.Load() < 5 {
		t.Errorf("only %d ranks sampled while it ran", sampled.Load())
	}
}

// sampleRanks reads random posts' ranks until stop and checks each against
// the truth at its read time; it answers how many it checked.
func sampleRanks(t *testing.T, fs *firestore.Client, c *counter.Client, n int, stop <-chan struct{}) int {
	checked := 0
	for {
		select {
		case <-stop:
			return checked
		case <-time.After(100 * time.Millisecond):
		}
		doc := fmt.Sprintf("posts/p%02d", rand.IntN(n))
		p, err := c.Rank(context.Background(), doc, "likes")
		if errors.Is(err, counter.ErrNotRanked) {
			continue
		}
		if err != nil {
			t.Errorf("rank %s: %v", doc, err)
			return checked
		}
		checkPlace(t, fs, doc, p)
		checked++
	}
}

// checkPlace checks p, doc's place, against the posts read at its read
// time: 1 + those with more likes, of all with likes that tally has
// folded (a post is on the board from its first fold), each of which
// records its cell.
func checkPlace(t *testing.T, fs *firestore.Client, doc string, p counter.Place) {
	t.Helper()
	snaps, err := fs.Collection("posts").Query.WithReadOptions(firestore.ReadTime(p.AsOf)).Documents(context.Background()).GetAll()
	if err != nil {
		t.Fatal(err)
	}
	var mine int64 = -1
	var likes []int64
	var unrecorded []string // posts folded with likes that record no cell: off the board, wrongly
	for _, s := range snaps {
		v, ok := s.Data()["likes"].(int64)
		if folded, _ := s.DataAtPath(firestore.FieldPath{"_tally", "as_of"}); !ok || folded == nil {
			continue // on the board from its first fold: one the app made with likes 0 is not, until Rollup folds its creation
		}
		if c, _ := s.DataAtPath(firestore.FieldPath{"_tally", "rank", "likes"}); c == nil {
			unrecorded = append(unrecorded, s.Ref.ID)
		}
		likes = append(likes, v)
		if s.Ref.Path[len(s.Ref.Path)-len(doc):] == doc {
			mine = v
		}
	}
	want := int64(1)
	for _, v := range likes {
		if v > mine {
			want++
		}
	}
	if p.Rank != want || p.Of != int64(len(likes)) || float64(mine) != p.Value || len(unrecorded) > 0 {
		t.Errorf("%s at %s: #%d of %d (value %v), want #%d of %d (value %d); posts with likes and no cell: %v", doc, p.AsOf.Format(time.RFC3339Nano), p.Rank, p.Of, p.Value, want, len(likes), mine, unrecorded)
	}
	if p.Reads > 3 || p.Reads < 2 {
		t.Errorf("%s: a rank cost %d reads, want 2 or 3", doc, p.Reads)
	}
}

// startRanked starts the stack ranking posts by likes, with faults in
// delivery, to three Rollup instances of its own, and a client of it.
func startRanked(t *testing.T, faults bridge.Faults) (*Stack, *firestore.Client, *counter.Client) {
	t.Helper()
	paths := emulatortest.RequirePaths(t)
	cfg := envConfig(t, map[string]string{"TALLY_COUNTS": rankCounts, "TALLY_ROLLUP_WINDOW": docsWindow.String(), "TALLY_SHARD_CACHE_TTL": "300ms"})
	cfg.Project = emulatortest.Project
	var instances atomic.Pointer[[]http.Handler]
	var next atomic.Int64
	rollups := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hs := instances.Load()
		if hs == nil {
			http.Error(w, "not yet", http.StatusServiceUnavailable)
			return
		}
		(*hs)[next.Add(1)%int64(len(*hs))].ServeHTTP(w, r)
	}))
	t.Cleanup(rollups.Close)
	s, fs := startOptions(t, Options{Config: cfg, Emulator: paths, Logs: os.Stderr, RollupURL: rollups.URL, Bridge: bridge.Options{Faults: faults}})
	hs := make([]http.Handler, 3)
	for i := range hs {
		hs[i] = rollup.New(emulatortest.ClientAt(t, s.EmulatorHost, emulatortest.Project),
			rollup.Config{Layout: cfg.Layout, Project: cfg.Project, Spacing: cfg.Spacing})
	}
	instances.Store(&hs)
	return s, fs, counter.New(fs, counter.Options{Layout: counter.LayoutOf(cfg.Layout), Spacing: cfg.Spacing})
}
