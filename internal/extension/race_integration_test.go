package extension_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/extension"
	"github.com/tallycounters/tally/internal/fsrpc"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/tools/extworker"
)

// held is what a document, its shards and its partials hold of field, at
// one read time: the sum the extension's clients make of them.
func held(ctx context.Context, c *firestore.Client, doc, field string) (int64, error) {
	var sum int64
	err := c.RunTransaction(ctx, func(ctx context.Context, tx *firestore.Transaction) error {
		sum = 0
		if snap, err := tx.Get(c.Doc(doc)); err == nil {
			n, _ := snap.Data()[field].(int64)
			sum += n
		}
		snaps, err := tx.Documents(c.Doc(doc).Collection(extension.Collection)).GetAll()
		if err != nil {
			return err
		}
		for _, s := range snaps {
			a, err := extension.AmountsOf(s.Ref.ID, s.Data())
			if err != nil {
				return err
			}
			n, _ := a.Of(firestore.FieldPath{field}).(int64)
			sum += n
		}
		return nil
	}, firestore.ReadOnly)
	return sum, err
}

// TestMovesBesideTheExtensionsWorkers: 20 clients of the extension's
// protocol add 30 likes each to one post, each on its own shard, while two
// tally movers and a stand-in for the extension's workers (shards into
// partials, partials into the post) move them at once. At every moment
// sampled, the post, its shards and its partials hold between the likes
// acknowledged and those sent: none lost, none counted twice. Once the
// clients stop, a move leaves the post holding all 600, and no shard or
// partial.
func TestMovesBesideTheExtensionsWorkers(t *testing.T) {
	c := emulatortest.Client(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	doc := "posts/" + emulatortest.ID(t)
	put(t, c, doc, map[string]any{"title": "hello"})
	var sent, acked atomic.Int64
	var clients, movers sync.WaitGroup
	for i := range 20 {
		shard := c.Doc(doc).Collection(extension.Collection).Doc(fmt.Sprintf("%04x-client-%d", i*997, i))
		clients.Go(func() {
			for range 30 {
				sent.Add(1)
				if _, err := extworker.Increment(ctx, shard, "likes", 1); err != nil {
					t.Errorf("a client's like: %v", err)
					return
				}
				acked.Add(1)
			}
		})
	}
	m := extension.NewMover(c, core.Default(), extension.MoverOptions{Counters: declare(t, "posts:likes")})
	for range 2 {
		movers.Go(func() {
			for ctx.Err() == nil {
				m.Move(ctx, doc, time.Time{}) // a failed move is retried by the next
			}
		})
	}
	movers.Go(func() { extworker.Worker{Client: c}.Run(ctx, []string{doc}, 20*time.Millisecond) })
	for range 10 {
		lo := acked.Load()
		n, err := held(ctx, c, doc, "likes")
		hi := sent.Load()
		if err != nil {
			t.Fatal(err)
		}
		if n < lo || n > hi {
			t.Errorf("the post, its shards and partials hold %d likes; %d were acknowledged and %d sent before", n, lo, hi)
		}
	}
	clients.Wait()
	cancel()
	movers.Wait()
	if _, err := m.MoveNow(context.Background(), doc); err != nil {
		t.Fatal(err)
	}
	snap, err := c.Doc(doc).Get(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := snap.Data()["likes"]; got != int64(600) {
		t.Errorf("likes %v; want 600", got)
	}
	if left := countsLeft(t, c, doc); len(left) != 0 {
		t.Errorf("left %v; want no count outside the post", left)
	}
}

// countsLeft is what doc's shards and partials hold that is not zero, by
// id. A partial the extension's workers have moved into the document
// holds zero (its updates and their negation), and a move leaves it, as
// it leaves a client's shard of zeros: a move never writes for zeros.
func countsLeft(t *testing.T, c *firestore.Client, doc string) map[string]extension.Amounts {
	t.Helper()
	snaps, err := c.Doc(doc).Collection(extension.Collection).Documents(context.Background()).GetAll()
	if err != nil {
		t.Fatal(err)
	}
	left := map[string]extension.Amounts{}
	for _, s := range snaps {
		a, err := extension.AmountsOf(s.Ref.ID, s.Data())
		if err != nil {
			t.Fatalf("%s: %v", s.Ref.ID, err)
		}
		for _, p := range a.Paths() {
			if a.Of(p) != int64(0) {
				left[s.Ref.ID] = a
			}
		}
	}
	return left
}

// TestMovesKeepToTheSpacing: four movers (as four Rollup instances) move
// one post over and over while a client likes it; however their
// transactions interleave, no two of their writes of the post are less
// than the spacing apart, and the post ends holding every like.
func TestMovesKeepToTheSpacing(t *testing.T) {
	c := emulatortest.Client(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	doc := "posts/" + emulatortest.ID(t)
	put(t, c, doc, map[string]any{"title": "hello"})
	const spacing = 300 * time.Millisecond
	var mu sync.Mutex
	var writes []time.Time
	var movers sync.WaitGroup
	for range 4 {
		m := extension.NewMover(c, core.Default(), extension.MoverOptions{Counters: declare(t, "posts:likes"), Spacing: spacing})
		movers.Go(func() {
			for ctx.Err() == nil {
				cctx, committed := fsrpc.WithCommitTime(ctx)
				if out, err := m.Move(cctx, doc, time.Now()); err == nil && out.Shards > 0 {
					mu.Lock()
					writes = append(writes, committed())
					mu.Unlock()
				}
			}
		})
	}
	shard := c.Doc(doc).Collection(extension.Collection).Doc("7f3a-client")
	for range 40 {
		if _, err := extworker.Increment(ctx, shard, "likes", 1); err != nil {
			t.Fatal(err)
		}
		time.Sleep(25 * time.Millisecond)
	}
	cancel()
	movers.Wait()
	slices.SortFunc(writes, func(a, b time.Time) int { return a.Compare(b) })
	for i := 1; i < len(writes); i++ {
		if gap := writes[i].Sub(writes[i-1]); gap < spacing {
			t.Errorf("two moves wrote the post %v apart; want the spacing, %v, at least", gap, spacing)
		}
	}
	if len(writes) < 2 {
		t.Errorf("%d moves wrote the post; want several", len(writes))
	}
	if _, err := extension.NewMover(c, core.Default(), extension.MoverOptions{Counters: declare(t, "posts:likes")}).MoveNow(context.Background(), doc); err != nil {
		t.Fatal(err)
	}
	if snap, err := c.Doc(doc).Get(context.Background()); err != nil || snap.Data()["likes"] != int64(40) {
		t.Errorf("the post: %v, %v; want 40 likes", snap.Data(), err)
	}
}
