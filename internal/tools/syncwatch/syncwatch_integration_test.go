package syncwatch_test

import (
	"context"
	"os"
	"sync/atomic"
	"testing"

	"cloud.google.com/go/firestore"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/tools/syncwatch"
)

func TestMain(m *testing.M) { emulatortest.Main(m) }

// TestWatchRaisesConsistentSnapshots: a document and its subcollection,
// changed together in one commit (a count moved from a shard into the
// document), are never seen half moved: every snapshot holds the count
// in exactly one of the two, and the last holds all 20 moves.
func TestWatchRaisesConsistentSnapshots(t *testing.T) {
	watchMoves(t, syncwatch.Open)
}

// TestWatchOpensAgainWhenAMessageIsGarbled: a message of the stream that
// does not parse, as the emulator's race makes one now and then, has the
// Stream open a new stream of its target, and go on: every snapshot
// still holds the count in exactly one place, and the last all 20 moves.
func TestWatchOpensAgainWhenAMessageIsGarbled(t *testing.T) {
	var armed, garbled atomic.Bool
	garble := func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		cs, err := streamer(ctx, desc, cc, method, opts...)
		return garbling{cs, &armed, &garbled}, err
	}
	watchMoves(t, func(ctx context.Context, host, database string, docs []string) (*syncwatch.Stream, syncwatch.Snapshot, error) {
		s, first, err := syncwatch.OpenWith(ctx, host, database, docs, grpc.WithStreamInterceptor(garble))
		armed.Store(true) // the first message after the first snapshot
		return s, first, err
	})
	if !garbled.Load() {
		t.Error("no message was garbled: the test did not test what it says")
	}
}

// garbling is a listen stream whose first message received once armed
// fails as one the emulator's race garbled does.
type garbling struct {
	grpc.ClientStream
	armed, garbled *atomic.Bool
}

func (g garbling) RecvMsg(m any) error {
	if g.armed.Load() && g.garbled.CompareAndSwap(false, true) {
		return status.Error(codes.Internal, "grpc: failed to unmarshal the received message: proto: cannot parse invalid wire-format data")
	}
	return g.ClientStream.RecvMsg(m)
}

// watchMoves follows a document and its shard, through a Stream that
// open makes, while 20 moves go from the shard into the document, and
// checks every snapshot.
func watchMoves(t *testing.T, open func(ctx context.Context, host, database string, docs []string) (*syncwatch.Stream, syncwatch.Snapshot, error)) {
	t.Helper()
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
	s, first, err := open(wctx, os.Getenv("FIRESTORE_EMULATOR_HOST"), "projects/"+emulatortest.Project+"/databases/(default)",
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
