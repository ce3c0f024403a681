package stack

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/extension"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/tools/extworker"
)

// A flood is clients of the extension's protocol writing a post's shards
// at about 50 writes a second, as an attacker may through the rules: +0
// into shards of their own, which moves nothing, or +1 into a new shard
// each time, which adds to the post. Neither holds back the folds of the
// post's own likes, nor another post's.
type flood struct {
	name string
	zero bool // +0 into four shards; else +1 into a new shard each write
	none bool // no flood: the baseline
}

var floods = []flood{{"+0 into four shards", true, false}, {"+1 into new shards", false, false}}

// baseline is no flood at all, for the benchmark's comparison.
var baseline = flood{"no flood", false, true}

// floodStack starts the stack with likes counted on posts by Increment,
// and views by the extension's clients too.
func floodStack(t testing.TB) *Stack {
	t.Helper()
	paths := emulatortest.RequirePaths(t)
	s, _ := startConfig(t, paths, envConfig(t, map[string]string{
		"TALLY_COUNTS": "posts:likes,views", "TALLY_EXTENSION_COUNTERS": "posts:views", "TALLY_EXTENSION_QUIET": "2s",
	}))
	return s
}

// run floods post until ctx ends, at about 50 writes a second (four
// writers, one each 80 ms), and says how many views it added.
func (f flood) run(ctx context.Context, t testing.TB, post *firestore.DocumentRef) int64 {
	if f.none {
		<-ctx.Done()
		return 0
	}
	var added atomic.Int64
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			tick := time.NewTicker(80 * time.Millisecond)
			defer tick.Stop()
			for n := 0; ctx.Err() == nil; n++ {
				shard, by := fmt.Sprintf("flood-%d", w), int64(0)
				if !f.zero {
					shard, by = fmt.Sprintf("flood-%d-%d", w, n), 1
				}
				// Each write runs to its answer: one cut off by the end of
				// the flood may have been taken all the same, a view the
				// flood would not count.
				if _, err := extworker.Increment(context.WithoutCancel(ctx), post.Collection(extension.Collection).Doc(shard), "views", by); err != nil {
					t.Errorf("a flood's write: %v", err)
					return
				}
				added.Add(by)
				select {
				case <-ctx.Done():
				case <-tick.C:
				}
			}
		})
	}
	wg.Wait()
	return added.Load()
}

// likeVisible likes post through Increment, and says how long after its
// answer the post held it.
func likeVisible(t testing.TB, s *Stack, doc *firestore.DocumentRef) time.Duration {
	t.Helper()
	ctx := context.Background()
	before, err := doc.Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	had, _ := before.Data()["likes"].(int64)
	if code, body := increment(t, s, `{"counter":"posts/`+doc.ID+`","field":"likes"}`); code != http.StatusOK {
		t.Fatalf("a like: %d %s", code, body)
	}
	answered := time.Now()
	for deadline := answered.Add(emulatortest.Liveness); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		snap, err := doc.Get(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n, _ := snap.Data()["likes"].(int64); n > had {
			return time.Since(answered)
		}
	}
	t.Fatalf("%s never held the like", doc.Path)
	return 0
}

// TestFloodsHoldBackNoFold: while each flood hits a post, a like of that
// post and of another, acknowledged, each reach their post (the waits end
// when they do: how long they took is the benchmark's); a flood of +0
// never has a move write the post; a flood of +1 has the post's moves
// leave the fold every other turn, and its views come out exact.
func TestFloodsHoldBackNoFold(t *testing.T) {
	t.Parallel()
	s := floodStack(t)
	fs := s.Functions.Client
	ctx := context.Background()
	for _, f := range floods {
		t.Run(f.name, func(t *testing.T) {
			flooded, other := fs.Doc("posts/"+emulatortest.ID(t)), fs.Doc("posts/"+emulatortest.ID(t)+"-other")
			for _, d := range []*firestore.DocumentRef{flooded, other} {
				if _, err := d.Create(ctx, map[string]any{"title": "hello", "likes": int64(0), "views": int64(0)}); err != nil {
					t.Fatal(err)
				}
			}
			fctx, stop := context.WithCancel(ctx)
			added := make(chan int64, 1)
			go func() { added <- f.run(fctx, t, flooded) }()
			for range 3 {
				t.Logf("a like visible %v after its answer on the flooded post, %v on another",
					likeVisible(t, s, flooded).Round(time.Millisecond), likeVisible(t, s, other).Round(time.Millisecond))
			}
			stop()
			sent := <-added
			snap, err := flooded.Get(ctx)
			if err != nil {
				t.Fatal(err)
			}
			book, _ := snap.Data()[core.FieldBookkeeping].(map[string]any)
			if _, moved := book[extension.FieldMovedAt]; f.zero && moved {
				t.Errorf("a move wrote the post for a flood of zeros: %v", book)
			}
			if f.zero {
				if views, _ := snap.Data()["views"].(int64); views != 0 {
					t.Errorf("a flood of zeros left the post with %d views", views)
				}
			} else if views := waitViews(t, flooded); views != sent {
				t.Errorf("the post holds %d views once no shard is left; its flood added %d", views, sent)
			}
		})
	}
}

// waitViews waits until no shard of the extension's is left under doc,
// and answers its views then, which must be what its shards held.
func waitViews(t *testing.T, doc *firestore.DocumentRef) int64 {
	t.Helper()
	ctx := context.Background()
	for deadline := time.Now().Add(emulatortest.Liveness); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		left, err := doc.Collection(extension.Collection).DocumentRefs(ctx).GetAll()
		if err != nil {
			t.Fatal(err)
		}
		if len(left) == 0 {
			snap, err := doc.Get(ctx)
			if err != nil {
				t.Fatal(err)
			}
			n, _ := snap.Data()["views"].(int64)
			return n
		}
	}
	t.Fatalf("%s kept shards of the extension's", doc.Path)
	return 0
}

// BenchmarkLikeBesideAFlood measures how long after its answer a like is
// visible in its post while each flood hits that post: on the flooded
// post, and on another (ms, the worst of b.N likes of each).
func BenchmarkLikeBesideAFlood(b *testing.B) {
	s := floodStack(b)
	fs := s.Functions.Client
	ctx := context.Background()
	for _, f := range append([]flood{baseline}, floods...) {
		b.Run(f.name, func(b *testing.B) {
			flooded, other := fs.Doc("posts/bench-"+emulatortest.ID(b)), fs.Doc("posts/bench-"+emulatortest.ID(b)+"-other")
			for _, d := range []*firestore.DocumentRef{flooded, other} {
				if _, err := d.Create(ctx, map[string]any{"title": "hello", "likes": int64(0), "views": int64(0)}); err != nil {
					b.Fatal(err)
				}
			}
			fctx, stop := context.WithCancel(ctx)
			done := make(chan struct{})
			go func() { f.run(fctx, b, flooded); close(done) }()
			var same, elsewhere []time.Duration
			for b.Loop() {
				same = append(same, likeVisible(b, s, flooded))
				elsewhere = append(elsewhere, likeVisible(b, s, other))
			}
			stop()
			<-done
			b.ReportMetric(float64(slices.Max(same).Milliseconds()), "ms-flooded-post-max")
			b.ReportMetric(float64(slices.Max(elsewhere).Milliseconds()), "ms-other-post-max")
		})
	}
}
