package rollup

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/tallycounters/tally/counting"
	"github.com/tallycounters/tally/internal/emulatortest"
	"github.com/tallycounters/tally/internal/eventarc"
	"github.com/tallycounters/tally/internal/opcount"
)

// TestAggregatePartsBoundTheCost: a post with 3,000 comments, backfilled
// by a reconcile, holds them in parts of at most counting.PartMax; then
// each new comment's event refolds only its part: one aggregation read
// and one write of the post per comment, whatever the post's size, and
// the count stays exact. (A new comment's own write is one more write;
// the budget, 3 reads and 3 writes a comment in all, holds even where
// Rollup reads the post again before each fold.)
func TestAggregatePartsBoundTheCost(t *testing.T) {
	ctx := context.Background()
	client, l, name := newPost(t, "posts:comments=count(comments)")
	comments := client.Doc(name).Collection("comments")
	const existing = 3000
	for b := 0; b < existing/500; b++ {
		batch := client.BulkWriter(ctx)
		for range 500 {
			if _, err := batch.Create(comments.NewDoc(), map[string]any{"text": "old"}); err != nil {
				t.Fatal(err)
			}
		}
		batch.End()
	}
	folder := counting.NewFolder(client, l, 50*time.Millisecond)
	if _, err := folder.Reconcile(ctx, name); err != nil {
		t.Fatal(err)
	}
	p, err := folder.Read(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(p.Parts["comments"]); n < 2 {
		t.Fatalf("after the backfill, %d parts; want the %d comments split", n, existing)
	}
	for key, part := range p.Parts["comments"] {
		if part.N > counting.PartMax {
			t.Errorf("part %s holds %d, past %d", key, part.N, counting.PartMax)
		}
	}
	if got := p.Aggregates["comments"]; got != int64(existing) {
		t.Fatalf("comments = %v after the backfill, want %d", got, existing)
	}

	ops := &opcount.Ops{}
	counted, err := opcount.Client(ctx, os.Getenv("FIRESTORE_EMULATOR_HOST"), emulatortest.Project, ops)
	if err != nil {
		t.Fatal(err)
	}
	defer counted.Close()
	h := New(counted, Config{Layout: l, Project: emulatortest.Project, Window: 50 * time.Millisecond})
	const added = 6
	for i := range added {
		if i == 1 {
			ops.Reset() // the first event reads the post: this instance did not know it
		}
		ref := comments.NewDoc()
		wr, err := ref.Create(ctx, map[string]any{"text": "new"})
		if err != nil {
			t.Fatal(err)
		}
		e := eventarc.Written(emulatortest.Project, "(default)", nil, eventarc.IntDoc(name+"/comments/"+ref.ID, "n", 1, wr.UpdateTime))
		if err := h.Handle(ctx, e); err != nil {
			t.Fatal(err)
		}
		time.Sleep(60 * time.Millisecond) // a window apart: one fold each
	}
	reads, writes := float64(ops.Reads())/(added-1), float64(ops.Writes())/(added-1)
	t.Logf("per new comment, on a post of %d in %d parts: %.2f reads and %.2f writes by Rollup", existing, len(p.Parts["comments"]), reads, writes)
	if reads > 2 || writes > 1 {
		t.Errorf("per new comment: %.2f reads and %.2f writes by Rollup; want at most 2 (an aggregation of one part, a read of the post) and 1", reads, writes)
	}
	snap, err := client.Doc(name).Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := snap.Data()["comments"]; got != int64(existing+added) {
		t.Errorf("comments = %v, want %d", got, existing+added)
	}
	if snap.Data()["title"] != "hello" {
		t.Errorf("the post's title is gone: %v", snap.Data())
	}
}
