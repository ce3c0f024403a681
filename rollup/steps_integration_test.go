package rollup

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/firestore"
	"google.golang.org/grpc"

	"github.com/tallycounters/tally/internal/fold"
	"github.com/tallycounters/tally/internal/fsrpc"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/testkit/layouttest"
	"github.com/tallycounters/tally/internal/tools/eventarc"
)

// slowAggregations returns a client of the emulator each of whose
// aggregation queries takes d more: a backend slower than a fold's
// bound allows for a big document's parts.
func slowAggregations(t *testing.T, d time.Duration) *firestore.Client {
	t.Helper()
	slow := func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		if method == "/google.firestore.v1.Firestore/RunAggregationQuery" {
			select {
			case <-time.After(d):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return streamer(ctx, desc, cc, method, opts...)
	}
	c, err := fsrpc.EmulatorClient(context.Background(), os.Getenv("FIRESTORE_EMULATOR_HOST"), emulatortest.Project, firestore.DefaultDatabaseID,
		[]grpc.DialOption{grpc.WithChainStreamInterceptor(slow)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestBigPostFoldsInSteps: a post of 9,000 comments in 18 parts, each of
// whose aggregations takes a second more, gets a new comment in each part
// at once, on a Rollup whose fold is bounded at 6 seconds: no fold could
// refold all 18 parts within it, nor within a step (aggregate.PartStep, 2 s,
// 8 parts at a time). It folds them in steps, each writing the parts it
// did, so every event is answered, the count is exact, and the post was
// written more than once on the way. Before, every fold outgrew its bound
// and wrote nothing, and was tried again from the start.
func TestBigPostFoldsInSteps(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	client, l, name := newPost(t, countOnly)
	comments := client.Doc(name).Collection("comments")
	createChildren(t, client, comments, 9000)
	folder := fold.NewFolder(client, l, 50*time.Millisecond)
	if _, err := folder.Reconcile(ctx, name); err != nil {
		t.Fatal(err)
	}
	p, err := folder.Read(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	parts := p.Parts["comments"]
	if len(parts) != 18 {
		t.Fatalf("9,000 comments are in %d parts; want 18", len(parts))
	}
	var mu sync.Mutex
	var writes []FoldInfo
	h := New(slowAggregations(t, time.Second), Config{Layout: layouttest.Public(l), Project: emulatortest.Project, Spacing: 50 * time.Millisecond,
		Hold: emulatortest.Liveness, OnFold: func(f FoldInfo) {
			if f.Wrote {
				mu.Lock()
				writes = append(writes, f)
				mu.Unlock()
			}
		}})
	h.tracker.foldBound = 6 * time.Second
	// A comment in each part, its id the part's start and more.
	var wg sync.WaitGroup
	errs := make(chan error, len(parts))
	for key := range parts {
		id := key[1:] + "zzzz"
		wr, err := comments.Doc(id).Create(ctx, comment(id))
		if err != nil {
			t.Fatal(err)
		}
		e := eventarc.Written(emulatortest.Project, "(default)", nil, eventarc.IntDoc(name+"/comments/"+id, "n", 1, wr.UpdateTime))
		wg.Go(func() { errs <- h.Handle(ctx, e) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("an event was not answered: %v", err)
		}
	}
	snap, err := client.Doc(name).Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := snap.Data()["comments"]; got != int64(9018) {
		t.Errorf("comments = %v, want 9018", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(writes) < 2 {
		t.Errorf("the post was written %d times; want the 18 parts in steps", len(writes))
	}
	for _, w := range writes {
		t.Logf("a step wrote %d part(s): comments %v", w.Parts, w.Aggregates["comments"])
	}
}
