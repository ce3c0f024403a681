package stack

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/internal/testkit/emulatortest"
)

// TestAggregatesUnderLoad: one post takes comment writes at up to 200 a
// second for 5 seconds, creates, edits and deletes, with every aggregate
// form declared, through the emulator's own delivery. Once the writes
// stop, its aggregates come to equal Firestore's own over its comments.
// (How long that takes is logged, not judged: it is the machine's.)
func TestAggregatesUnderLoad(t *testing.T) {
	t.Parallel()
	paths := emulatortest.RequirePaths(t)
	emulatortest.Long(t, "a load of 5 seconds")

	ctx := context.Background()
	_, client := startConfig(t, paths, envConfig(t, map[string]string{"TALLY_COUNTS": aggregateForms}))
	doc := client.Collection("posts").Doc(emulatortest.ID(t))
	if _, err := doc.Create(ctx, map[string]any{"title": "busy"}); err != nil {
		t.Fatal(err)
	}
	comments := doc.Collection("comments")
	var mu sync.Mutex
	var made []*firestore.DocumentRef
	var wg sync.WaitGroup
	tick := time.NewTicker(5 * time.Millisecond) // 200 a second at most
	writes := 0
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); <-tick.C {
		writes++
		wg.Go(func() {
			mu.Lock()
			var ref *firestore.DocumentRef
			if n := len(made); n > 10 && rand.N(3) == 0 {
				ref = made[rand.N(n)]
			}
			mu.Unlock()
			var err error
			switch {
			case ref == nil:
				ref = comments.NewDoc()
				_, err = ref.Create(ctx, map[string]any{"score": rand.N(int64(10)), "hidden": rand.N(2) == 0, "stars": rand.N(int64(5)) + 1})
				mu.Lock()
				made = append(made, ref)
				mu.Unlock()
			case rand.N(2) == 0:
				_, err = ref.Delete(ctx)
			default:
				_, err = ref.Set(ctx, map[string]any{"score": 2.5, "hidden": false})
			}
			if err != nil {
				t.Error(err)
			}
		})
	}
	tick.Stop()
	wg.Wait()
	start := time.Now()
	settled(t, doc, truth(t, client, comments.Query))
	t.Logf("%d comment writes in 5 s; the post equalled Firestore's own aggregations %v after the last", writes, time.Since(start).Round(time.Millisecond))
}
