package syncwatch_test

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/tools/syncwatch"
)

func TestMain(m *testing.M) { emulatortest.Main(m) }

// TestWatchRaisesConsistentSnapshots: a document and its subcollection,
// changed together in one commit (a count moved from a shard into the
// document), are never seen half moved: every snapshot holds the count
// in exactly one of the two.
func TestWatchRaisesConsistentSnapshots(t *testing.T) {
	c := emulatortest.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	doc := c.Doc("posts/" + emulatortest.ID(t))
	shard := doc.Collection("parts").Doc("s")
	if _, err := doc.Set(ctx, map[string]any{"n": int64(0)}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var sums []int64
	wctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- syncwatch.Watch(wctx, os.Getenv("FIRESTORE_EMULATOR_HOST"), "projects/"+emulatortest.Project+"/databases/(default)",
			syncwatch.Targets{Documents: []string{doc.Path, shard.Path}},
			func(s syncwatch.Snapshot) {
				mu.Lock()
				defer mu.Unlock()
				sums = append(sums, syncwatch.Int(s.Docs[doc.Path], "n")+syncwatch.Int(s.Docs[shard.Path], "n"))
			})
	}()
	for i := range 20 {
		if _, err := shard.Set(ctx, map[string]any{"n": int64(1)}); err != nil {
			t.Fatal(err)
		}
		b := c.Batch()
		b.Set(doc, map[string]any{"n": int64(i + 1)})
		b.Delete(shard)
		if _, err := b.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(500 * time.Millisecond)
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(sums) < 2 {
		t.Fatalf("%d snapshots; want many", len(sums))
	}
	for i := 1; i < len(sums); i++ {
		if sums[i] < sums[i-1] || sums[i] > sums[i-1]+1 {
			t.Errorf("the sum went %d, then %d: a snapshot saw a move half made", sums[i-1], sums[i])
		}
	}
	if last := sums[len(sums)-1]; last != 20 {
		t.Errorf("the last snapshot sums %d; want 20", last)
	}
}
