package stack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/counter"
	"github.com/tallycounters/tally/internal/cloudlog"
	"github.com/tallycounters/tally/internal/core/rank"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/tools/bridge"
	"github.com/tallycounters/tally/rollup"
)

// rankCounts ranks posts by their likes and by a trend of them, and users
// by the sum of their games' points.
const rankCounts = "posts:likes,hot=trend(likes, 6h),rank(likes),rank(hot);users:points=sum(games.points),rank(points)"

// TestRankIsExact ranks posts by likes through the whole local stack: the
// emulator's own trigger delivery, with events duplicated and delayed,
// to three Rollup instances. Likes follow a Zipf-like spread, some by
// the hundred (so that posts share ranges of values), a viral post climbs
// past every other, posts are deleted (through the Go client, and by the
// app itself) and one created again; some are made with 0 likes by the
// app, and some likes are taken back by the hundred, so that posts move
// down past others. Users are ranked by the sum of their games' points,
// as games are added, lowered and deleted. Ranks by likes and by the
// trend sampled while it runs, and every post's and user's at the end,
// are each 1 + the documents whose value was greater at the rank's read
// time, read from the documents themselves; each cost at most 3 reads.
// Where each post's likes stand, from the summary alone, holds the truth.
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
		if code, body := increment(t, s, fmt.Sprintf(`{"counter":"posts/p%02d","field":"likes","by":%d}`, i, by)); code != http.StatusOK {
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
				switch r.IntN(8) {
				case 0, 1:
					by = 97 // past 255: ranges of many values
				case 2:
					by = -97 // down past others
				}
				like(i, by)
			}
		})
	}
	const users = 12
	for u := range users {
		if _, err := fs.Doc(fmt.Sprintf("users/u%02d", u)).Create(ctx, map[string]any{"name": u}); err != nil {
			t.Fatal(err)
		}
	}
	for w := range 2 {
		likes.Go(func() { play(t, fs, users, rand.New(rand.NewPCG(uint64(w), 2))) })
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
		checkPlace(t, fs, doc, "likes", p)
		checkStanding(t, fs, c, "posts", "likes", p.Value)
		ranked++
		if i == n-1 && p.Rank != 1 {
			t.Errorf("the viral post is #%d of %d, want #1", p.Rank, p.Of)
		}
		if p, err = c.Rank(ctx, doc, "hot"); err != nil {
			t.Fatalf("%s by hot: %v", doc, err)
		}
		checkPlace(t, fs, doc, "hot", p)
	}
	for u := range users {
		doc := fmt.Sprintf("users/u%02d", u)
		p, err := c.Rank(ctx, doc, "points")
		if err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		checkPlace(t, fs, doc, "points", p)
	}
	if p, _ := c.Rank(ctx, "posts/p00", "likes"); p.Of != int64(n-2) {
		t.Errorf("the board holds %d posts, want %d (two deleted)", p.Of, n-2)
	}
	t.Logf("%d ranks checked at the end, %d while it ran", ranked, sampled.Load())
	if sampled.Load() < 5 {
		t.Errorf("only %d ranks sampled while it ran", sampled.Load())
	}
}

// play adds games to users' games, with points from -50 to 349, and
// lowers and deletes some, so that users move up and down the board.
func play(t *testing.T, fs *firestore.Client, users int, r *rand.Rand) {
	ctx := context.Background()
	var games []*firestore.DocumentRef
	for range 30 {
		switch k := r.IntN(6); {
		case k == 0 && len(games) > 0:
			g := games[r.IntN(len(games))]
			if _, err := g.Delete(ctx); err != nil {
				t.Error(err)
			}
		case k == 1 && len(games) > 0:
			if _, err := games[r.IntN(len(games))].Set(ctx, map[string]any{"points": int64(-r.IntN(300))}); err != nil {
				t.Error(err)
			}
		default:
			g := fs.Collection(fmt.Sprintf("users/u%02d/games", r.IntN(users))).NewDoc()
			if _, err := g.Create(ctx, map[string]any{"points": int64(r.IntN(400) - 50)}); err != nil {
				t.Error(err)
			}
			games = append(games, g)
		}
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
		doc, field := fmt.Sprintf("posts/p%02d", rand.IntN(n)), []string{"likes", "hot"}[rand.IntN(2)]
		p, err := c.Rank(context.Background(), doc, field)
		if errors.Is(err, counter.ErrNotRanked) {
			continue
		}
		if err != nil {
			t.Errorf("rank %s: %v", doc, err)
			return checked
		}
		checkPlace(t, fs, doc, field, p)
		checked++
	}
}

// checkPlace checks p, doc's place by field, against its collection's
// documents read at the place's read time: 1 + those with a greater value,
// of all with a value that tally has folded (a document is on the board
// from its first fold), each of which records its cell.
func checkPlace(t *testing.T, fs *firestore.Client, doc, field string, p counter.Place) {
	t.Helper()
	values := boardAt(t, fs, path.Dir(doc), field, p.AsOf)
	mine, ok := values[doc]
	if want := above(values, mine) + 1; !ok || p.Rank != want || p.Of != int64(len(values)) || mine != p.Value {
		t.Errorf("%s by %s at %s: #%d of %d (value %v), want #%d of %d (value %v, on the board: %v)", doc, field, p.AsOf.Format(time.RFC3339Nano),
			p.Rank, p.Of, p.Value, want, len(values), mine, ok)
	}
	if p.Reads > 3 || p.Reads < 2 {
		t.Errorf("%s: a rank cost %d reads, want 2 or 3", doc, p.Reads)
	}
}

// checkStanding checks where value stands by field among collection's
// documents, from the summary alone, against the documents read at its
// read time: the true place lies in the span it gives.
func checkStanding(t *testing.T, fs *firestore.Client, c *counter.Client, collection, field string, value float64) {
	t.Helper()
	s, err := c.Standing(context.Background(), collection, field, value)
	if err != nil {
		t.Fatal(err)
	}
	values := boardAt(t, fs, collection, field, s.AsOf)
	if truth := above(values, value) + 1; truth < s.Best || truth > s.Worst || s.Of != int64(len(values)) || s.Reads != 1 {
		t.Errorf("%s by %s, a value of %v at %s: #%d to #%d of %d in %d reads, want #%d of %d in 1", collection, field, value,
			s.AsOf.Format(time.RFC3339Nano), s.Best, s.Worst, s.Of, s.Reads, truth, len(values))
	}
}

// boardAt is the values by field of collection's documents at the read
// time at, by path, of those tally had folded; each must record its cell.
func boardAt(t *testing.T, fs *firestore.Client, collection, field string, at time.Time) map[string]float64 {
	t.Helper()
	snaps, err := fs.Collection(collection).Query.WithReadOptions(firestore.ReadTime(at)).Documents(context.Background()).GetAll()
	if err != nil {
		t.Fatal(err)
	}
	values := map[string]float64{}
	for _, s := range snaps {
		v, ok := rank.Value(s.Data()[field])
		if _, folded := s.Data()["_tally"]; !ok || !folded {
			continue // on the board from its first fold: one the app made with likes 0 is not, until Rollup folds its creation
		}
		if c, _ := s.DataAtPath(firestore.FieldPath{"_tally", "rank", field}); c == nil {
			t.Errorf("%s holds %s %v, folded, and records no cell: off the board", s.Ref.Path, field, v)
		}
		values[collection+"/"+s.Ref.ID] = v
	}
	return values
}

// above is how many of values are greater than v.
func above(values map[string]float64, v float64) int64 {
	var n int64
	for _, w := range values {
		if w > v {
			n++
		}
	}
	return n
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
			rollup.Config{Layout: cfg.Layout, Project: cfg.Project, Spacing: cfg.Spacing, Logger: cloudlog.New(os.Stderr, slog.LevelWarn)})
	}
	instances.Store(&hs)
	return s, fs, counter.New(fs, counter.Options{Layout: cfg.Layout, Spacing: cfg.Spacing})
}
