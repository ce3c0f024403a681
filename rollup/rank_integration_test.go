package rollup

import (
	"context"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/internal/adder"
	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/core/rank"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/testkit/layouttest"
	"github.com/tallycounters/tally/internal/tools/eventarc"
	"github.com/tallycounters/tally/internal/tools/opcount"
)

// TestRankedFoldReadsNothing: a ranked post on one shard folds from its
// likes' events with no read of the post and no sum, as an unranked one
// does. Increment's write carries the cells the post recorded beside the
// update time it read, so the fold knows what its write moves; the post
// moves up its board in the same commit, and its place is exact. A write
// that carries no cells (the post unranked when Increment read it) has
// the fold read the post instead.
func TestRankedFoldReadsNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	client := emulatortest.Client(t)
	collection := "ranked" + strings.ReplaceAll(emulatortest.ID(t)[len("TestRankedFoldReadsNothing-"):], "-", "")
	l := core.Default()
	var err error
	if l.Docs, err = core.ParseCounts(collection + ":likes,rank(likes)"); err != nil {
		t.Fatal(err)
	}
	name := collection + "/p"
	if _, err := client.Doc(name).Create(ctx, map[string]any{"title": "hello"}); err != nil {
		t.Fatal(err)
	}
	ops := &opcount.Ops{}
	var mu sync.Mutex
	var read []string
	ops.OnRead = func(n string) {
		mu.Lock()
		defer mu.Unlock()
		read = append(read, n[strings.Index(n, "/documents/")+len("/documents/"):])
	}
	counted, err := opcount.Client(ctx, os.Getenv("FIRESTORE_EMULATOR_HOST"), emulatortest.Project, ops)
	if err != nil {
		t.Fatal(err)
	}
	defer counted.Close()
	h := New(counted, Config{Layout: layouttest.Public(l), Project: emulatortest.Project, Spacing: testWindow})
	if err := h.Handle(ctx, createdEvent(t, name)); err != nil { // on the board at 0
		t.Fatal(err)
	}
	board, err := l.Board(collection, "likes")
	if err != nil {
		t.Fatal(err)
	}
	life := emulatortest.Life(t, l, client, name)
	// handle hands shard 0's event as it stands to h, and answers what
	// the fold read.
	handle := func(h *Handler) (*firestore.DocumentSnapshot, []string) {
		t.Helper()
		shard, err := l.Shard(client, name, life, 0).Get(ctx)
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		read = nil
		mu.Unlock()
		if err := h.Handle(ctx, eventarc.Written(emulatortest.Project, "(default)", nil, eventarc.Snapshot(shard))); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		return shard, slices.Clone(read)
	}
	likes := core.Count{Field: "likes", Shard: "likes"}
	for i := range 3 {
		time.Sleep(2 * testWindow)
		add := adder.New(client, adder.Config{Layout: l}) // a new instance reads the post: its first write carries what it read
		if _, _, err := add.Add(ctx, name, likes, 1); err != nil {
			t.Fatal(err)
		}
		shard, read := handle(h)
		if cell, _ := shard.DataAt(core.FieldBookkeeping + "." + core.FieldParentRank + ".likes"); cell != board.Grid.Cell(float64(i)) {
			t.Fatalf("like %d: shard 0 carries the cell %v, want %d, the post's", i+1, cell, board.Grid.Cell(float64(i)))
		}
		for _, n := range read {
			if n == name || strings.HasPrefix(n, name+"/") {
				t.Errorf("like %d: the fold read %s", i+1, n)
			}
		}
		place, err := rank.Read(ctx, client, board, name)
		if err != nil {
			t.Fatal(err)
		}
		if place.Rank != 1 || place.Of != 1 || place.Value != float64(i+1) {
			t.Errorf("like %d: place %+v, want #1 of 1 at %d likes", i+1, place, i+1)
		}
	}

	// A write that carries the post's update time but no cells, to an
	// instance that knows nothing of the post: the fold reads it, and moves it.
	time.Sleep(2 * testWindow)
	h = New(counted, Config{Layout: layouttest.Public(l), Project: emulatortest.Project, Spacing: testWindow})
	post, err := client.Doc(name).Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Shard(client, name, life, 0).Update(ctx, []firestore.Update{
		{FieldPath: []string{"likes"}, Value: firestore.Increment(1)},
		{FieldPath: []string{core.FieldBookkeeping, core.FieldParentSeen}, Value: post.UpdateTime},
		{FieldPath: []string{core.FieldBookkeeping, core.FieldParentRank}, Value: firestore.Delete},
	}); err != nil {
		t.Fatal(err)
	}
	if _, read := handle(h); !slices.Contains(read, name) {
		t.Errorf("a write with no cells: the fold read %v, not the post", read)
	}
	if place, err := rank.Read(ctx, client, board, name); err != nil || place.Value != 4 || place.Rank != 1 {
		t.Errorf("after a write with no cells: place %+v, %v; want #1 at 4 likes", place, err)
	}
}
