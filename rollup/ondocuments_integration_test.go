package rollup

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/internal/adder"
	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/testkit/layouttest"
	"github.com/tallycounters/tally/internal/tools/eventarc"
)

// newPost declares the counts given (TALLY_COUNTS) and creates a post of
// the test's own, titled hello, as the app does.
func newPost(t testing.TB, counts string) (*firestore.Client, core.Layout, string) {
	t.Helper()
	client := emulatortest.Client(t)
	l := core.Default()
	var err error
	if l.Docs, err = core.ParseCounts(counts); err != nil {
		t.Fatal(err)
	}
	name := "posts/" + emulatortest.ID(t)
	if _, err := client.Doc(name).Create(context.Background(), map[string]any{"title": "hello"}); err != nil {
		t.Fatal(err)
	}
	return client, l, name
}

// TestDocsGrowAndDuplicates: on a post without num_shards (Increment then
// uses the default), a busy count makes the fold write _tally.num_shards,
// never a field of the app's; every event, delivered twice and out of
// order, is answered; the counts are exact; and a post that is gone is
// never brought back by its shards' late events.
func TestDocsGrowAndDuplicates(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	client, l, name := newPost(t, "posts:likes,views")
	h := New(client, Config{Layout: layouttest.Public(l), Project: emulatortest.Project, Spacing: 50 * time.Millisecond,
		Grow: GrowPolicy{PerShard: 0.001, Max: 20, Period: 100 * time.Millisecond, Default: 4}})
	life := emulatortest.Life(t, l, client, name)
	shard := func(n int) string { return fmt.Sprintf("%s/lives/%s/shards/%d", name, life, n) }
	counts := map[int]int64{}
	var events []*eventarc.Doc
	for i := range 40 {
		n, field := i%4, []string{"likes", "views"}[i%2]
		wr, err := l.Shard(client, name, life, n).Set(ctx, adder.ShardFields(l, map[string]int64{field: 1}, firestore.Delete, firestore.Delete), firestore.MergeAll)
		if err != nil {
			t.Fatal(err)
		}
		counts[i%2]++
		events = append(events, eventarc.IntDoc(shard(n), field, counts[i%2], wr.UpdateTime))
		if i%10 == 9 {
			time.Sleep(60 * time.Millisecond) // folds a window apart, so that growth has a rate
		}
		e := eventarc.Written(emulatortest.Project, "(default)", nil, events[len(events)-1])
		if err := h.Handle(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	for i := len(events) - 1; i >= 0; i-- { // every event again, newest first
		if err := h.Handle(ctx, eventarc.Written(emulatortest.Project, "(default)", nil, events[i])); err != nil {
			t.Fatal(err)
		}
	}
	snap, err := client.Doc(name).Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	d := snap.Data()
	if d["likes"] != int64(20) || d["views"] != int64(20) || d["title"] != "hello" {
		t.Errorf("post = %v; want likes 20, views 20 and its title", d)
	}
	if n, _ := l.NumShards(d); n <= 4 || n > 20 {
		t.Errorf("_tally.num_shards = %d, want the default 4 grown, to at most 20", n)
	}
	if _, ok := d[core.FieldNumShards]; ok {
		t.Error("num_shards was written beside the app's fields")
	}

	if _, err := client.Doc(name).Delete(ctx); err != nil {
		t.Fatal(err)
	}
	wr, err := l.Shard(client, name, life, 0).Set(ctx, map[string]any{"likes": firestore.Increment(5)}, firestore.MergeAll)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Handle(ctx, eventarc.Written(emulatortest.Project, "(default)", nil, eventarc.IntDoc(shard(0), "likes", 99, wr.UpdateTime))); err != nil {
		t.Fatalf("the event of a deleted post was not acknowledged: %v", err)
	}
	if _, err := client.Doc(name).Get(ctx); err == nil {
		t.Error("a late event brought the deleted post back")
	}
}

// TestDocsWindowAcrossInstances: three Rollup instances share a post's
// events while its three counts are incremented from many writers at once,
// on 5 shards (a post without num_shards, where TALLY_DEFAULT_SHARDS is 5):
// every count ends exact, and the post's tally writes, as their commits
// date them, are a window apart or more.
func TestDocsWindowAcrossInstances(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	client, l, name := newPost(t, "posts:likes,views,shares")
	life := emulatortest.Life(t, l, client, name)
	const window = 150 * time.Millisecond
	var mu sync.Mutex
	var writes []time.Time
	handlers := make([]*Handler, 3)
	for i := range handlers {
		handlers[i] = New(client, Config{Layout: layouttest.Public(l), Project: emulatortest.Project, Spacing: window, Grow: GrowPolicy{Default: 5},
			OnFold: func(f FoldInfo) {
				if f.Wrote {
					mu.Lock()
					writes = append(writes, f.Updated)
					mu.Unlock()
				}
			}})
	}
	fields := []string{"likes", "views", "shares"}
	var wg sync.WaitGroup
	for w := range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20 {
				n, field := (w+i)%5, fields[(w*7+i)%3]
				wr, err := l.Shard(client, name, life, n).Set(ctx, adder.ShardFields(l, map[string]int64{field: 1}, firestore.Delete, firestore.Delete), firestore.MergeAll)
				if err != nil {
					t.Error(err)
					return
				}
				e := eventarc.Written(emulatortest.Project, "(default)", nil,
					eventarc.IntDoc(fmt.Sprintf("%s/lives/%s/shards/%d", name, life, n), field, 1, wr.UpdateTime))
				if err := handlers[(w+i)%len(handlers)].Handle(ctx, e); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	snap, err := client.Doc(name).Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, f := range fields {
		n, _ := snap.Data()[f].(int64)
		total += n
	}
	if total != 240 {
		t.Errorf("the counts add up to %d, want 240: %v", total, snap.Data())
	}
	slicesSortTimes(writes)
	checkSpaced(t, writes, window)
	t.Logf("%d tally writes of the post", len(writes))
}
