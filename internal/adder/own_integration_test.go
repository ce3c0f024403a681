package adder

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/fold"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
)

// layoutOf is the layout of counts on documents that counts declares.
func layoutOf(t *testing.T, counts string) core.Layout {
	t.Helper()
	l := core.Default()
	var err error
	if l.Docs, err = core.ParseCounts(counts); err != nil {
		t.Fatal(err)
	}
	return l
}

// TestQuietDocumentCountedInItself: an increment of a document that had no
// write for the spacing is written into the document itself, with its own
// part; one of a document written within it goes to a shard; a fold
// writes each count as its shards' sum and its own part, so that the
// counts are exact whichever way each increment went, and the app's
// fields are kept. Every write into the document itself is the spacing
// after the document's write before it, and concurrent increments make
// one at a time.
func TestQuietDocumentCountedInItself(t *testing.T) {
	emulatortest.Require(t)
	const spacing = 200 * time.Millisecond
	ctx := context.Background()
	fs := emulatortest.Client(t)
	l := layoutOf(t, "posts:likes,views")
	likes, views := core.Count{Field: "likes", Shard: "likes"}, core.Count{Field: "views", Shard: "views"}
	quiet := New(fs, Config{Layout: l, InItself: spacing})
	busy := New(fs, Config{Layout: l, InItself: time.Hour}) // every document was written within its spacing
	folder := fold.NewFolder(fs, l, spacing)
	id := "posts/" + emulatortest.ID(t)
	doc := l.Counter(fs, id)
	if _, err := doc.Create(ctx, map[string]any{"title": "v0"}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(spacing)
	shard, first, err := quiet.Add(ctx, id, likes, 2)
	if err != nil || shard != InItself {
		t.Fatalf("the first like of a post quiet for the spacing: shard %d, %v; want it written into the post", shard, err)
	}
	data := read(t, doc)
	own, _ := data[core.FieldBookkeeping].(map[string]any)[core.FieldOwn].(map[string]any)
	if data["likes"] != int64(2) || own["likes"] != int64(2) || data["title"] != "v0" {
		t.Fatalf("post = %v; want likes 2, its own part 2, and the title", data)
	}
	if shard, _, err := busy.Add(ctx, id, views, 5); err != nil || shard == InItself {
		t.Fatalf("a view of a post written within the spacing: shard %d, %v; want a shard", shard, err)
	}

	// The app edits the post; increments race each other and folds.
	if _, err := doc.Update(ctx, []firestore.Update{{Path: "title", Value: "v1"}}); err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"likes": 2, "views": 5}
	var mu sync.Mutex
	var itself []time.Time // the commit times of the writes into the post
	itself = append(itself, first)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 12 {
				c := []core.Count{likes, views}[(w+i)%2]
				shard, at, err := quiet.Add(ctx, id, c, 1)
				if err != nil {
					t.Errorf("add: %v", err)
					return
				}
				mu.Lock()
				want[c.Field]++
				if shard == InItself {
					itself = append(itself, at)
				}
				mu.Unlock()
				if i%4 == 3 {
					time.Sleep(spacing / 2)
				}
			}
		})
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range 4 {
			if _, err := folder.Fold(ctx, id); err != nil {
				t.Errorf("fold: %v", err)
			}
		}
	}()
	wg.Wait()
	time.Sleep(spacing) // the post is quiet again: this like is written into it, on a cache the folds made stale
	shard, last, err := quiet.Add(ctx, id, likes, 1)
	if err != nil || shard != InItself {
		t.Fatalf("a like of a post quiet again: shard %d, %v; want it written into the post", shard, err)
	}
	want["likes"]++
	itself = append(itself, last)
	if _, err := folder.Fold(ctx, id); err != nil {
		t.Fatal(err)
	}
	data = read(t, doc)
	if data["likes"] != want["likes"] || data["views"] != want["views"] || data["title"] != "v1" {
		t.Errorf("post = %v; want likes %d, views %d and the app's title v1", data, want["likes"], want["views"])
	}
	drifts, err := folder.Reconcile(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	known, err := folder.ReadAll(ctx, []string{id}) // Reconcile's way over many documents
	if err != nil || known[id] == nil {
		t.Fatalf("read %s with the others: %v, %v", id, known, err)
	}
	many, err := folder.ReconcileKnown(ctx, id, known[id])
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range append(drifts, many...) {
		if d.Drift != 0 || d.Sum != want[d.Field] {
			t.Errorf("reconcile: %+v; want no drift, sum %d", d, want[d.Field])
		}
	}
	slices.SortFunc(itself, time.Time.Compare)
	for i := 1; i < len(itself); i++ {
		if gap := itself[i].Sub(itself[i-1]); gap < spacing {
			t.Errorf("writes into the post %d and %d are %v apart, within the spacing %v", i-1, i, gap, spacing)
		}
	}
	t.Logf("%d of 99 increments written into the post itself", len(itself))
}

// TestNotCountedInItself: a document whose window no fold has made yet,
// and one that is gone, are never written into: the first's increments go
// to shards, the second's are refused with nothing written.
func TestNotCountedInItself(t *testing.T) {
	emulatortest.Require(t)
	ctx := context.Background()
	fs := emulatortest.Client(t)
	l := layoutOf(t, "posts:views,views_today=views per day")
	a := New(fs, Config{Layout: l, InItself: time.Millisecond})
	id := "posts/" + emulatortest.ID(t)
	doc := l.Counter(fs, id)
	if _, err := doc.Create(ctx, map[string]any{"title": "v0"}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond)
	views, err := l.Check(id, "views")
	if err != nil {
		t.Fatal(err)
	}
	if shard, _, err := a.Add(ctx, id, views, 1); err != nil || shard == InItself {
		t.Errorf("a view of a post with a window: shard %d, %v; want a shard", shard, err)
	}
	plain := New(fs, Config{Layout: layoutOf(t, "posts:views"), InItself: time.Millisecond})
	gone := "posts/" + emulatortest.ID(t) + "-gone"
	ref := l.Counter(fs, gone)
	if _, err := ref.Create(ctx, map[string]any{"title": "v0"}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond)
	if shard, _, err := plain.Add(ctx, gone, views, 1); err != nil || shard != InItself {
		t.Fatalf("a view of a quiet post: shard %d, %v; want it written into the post", shard, err)
	}
	if _, err := ref.Delete(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond)
	if _, _, err := plain.Add(ctx, gone, views, 1); !errors.Is(err, core.ErrNoCounter) {
		t.Errorf("a view of a deleted post: %v; want ErrNoCounter", err)
	}
	if snap, err := ref.Get(ctx); err == nil || snap.Exists() {
		t.Errorf("the deleted post is back: %v", snap.Data())
	}
}

// read is doc's data now.
func read(t *testing.T, doc *firestore.DocumentRef) map[string]any {
	t.Helper()
	snap, err := doc.Get(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return snap.Data()
}
