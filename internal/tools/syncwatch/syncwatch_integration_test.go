package syncwatch_test

import (
	"context"
	"os"
	"testing"

	"cloud.google.com/go/firestore"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/tools/syncwatch"
)

func TestMain(m *testing.M) { emulatortest.Main(m) }

// TestWatchRaisesConsistentSnapshots: a document and its subcollection,
// changed together in one commit (a count moved from a shard into the
// document), are never seen half moved: every snapshot holds the count
// in exactly one of the two, and the last holds all 20 moves.
func TestWatchRaisesConsistentSnapshots(t *testing.T) {
	c := emulatortest.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), emulatortest.Liveness)
	defer cancel()
	doc := c.Doc("posts/" + emulatortest.ID(t))
	shard := doc.Collection("parts").Doc("s")
	if _, err := doc.Set(ctx, map[string]any{"n": int64(0)}); err != nil {
		t.Fatal(err)
	}
	sum := func(s syncwatch.Snapshot) int64 {
		return syncwatch.Int(s.Docs[doc.Path], "n") + syncwatch.Int(s.Docs[shard.Path], "n")
	}
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	s, first, err := syncwatch.Open(wctx, os.Getenv("FIRESTORE_EMULATOR_HOST"), "projects/"+emulatortest.Project+"/databases/(default)",
		[]string{doc.Path, shard.Path})
	if err != nil {
		t.Fatal(err)
	}
	if got := sum(first); got != 0 {
		t.Fatalf("the first snapshot sums %d; want 0", got)
	}
	sums := make(chan int64)
	done := make(chan error, 1)
	go func() {
		done <- s.Follow(func(s syncwatch.Snapshot) {
			select {
			case sums <- sum(s):
			case <-wctx.Done():
			}
		})
		close(sums)
	}()
	const moves = 20
	wrote := make(chan error, 1)
	go func() {
		for i := range moves {
			if _, err := shard.Set(ctx, map[string]any{"n": int64(1)}); err != nil {
				wrote <- err
				return
			}
			if err := c.RunTransaction(ctx, func(ctx context.Context, tx *firestore.Transaction) error {
				if err := tx.Set(doc, map[string]any{"n": int64(i + 1)}); err != nil {
					return err
				}
				return tx.Delete(shard)
			}); err != nil {
				wrote <- err
				return
			}
		}
		wrote <- nil
	}()
	// The listener stops once every write has been answered and it has
	// seen every move: the emulator answers a write that changes a
	// document while a listener of it is being cancelled with an error,
	// though it applied it (docs/testing.md).
	check := func(got int64, last *int64) {
		if got < *last || got > *last+1 {
			t.Errorf("the sum went %d, then %d: a snapshot saw a move half made", *last, got)
		}
		*last = got
	}
	last, seen, written := int64(0), 1, false
	for !written || last != moves {
		select {
		case err := <-wrote:
			if err != nil {
				t.Fatal(err)
			}
			written = true
		case got, ok := <-sums:
			if !ok {
				t.Fatalf("after %d snapshots, summing %d: %v", seen, last, <-done)
			}
			seen++
			check(got, &last)
		}
	}
	stop()
	for got := range sums {
		check(got, &last)
	}
	if err := <-done; err != nil {
		t.Fatalf("after %d snapshots: %v", seen, err)
	}
	if last != moves {
		t.Errorf("the last snapshot sums %d; want %d", last, moves)
	}
}
