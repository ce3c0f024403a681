package rollup

import (
	"context"
	"os"
	"strconv"
	"strings"
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
	c := changeCost(t, 3000, 6)
	t.Logf("per new comment, on a post of %d in %d parts: %.2f reads and %.2f writes by Rollup", c.existing, c.parts, c.reads, c.writes)
	if c.reads > 2 || c.writes > 1 {
		t.Errorf("per new comment: %.2f reads and %.2f writes by Rollup; want at most 2 (an aggregation of one part, a read of the post) and 1", c.reads, c.writes)
	}
}

// BenchmarkAggregateChange reports what Rollup reads and writes for each
// new comment of a post that has TALLY_BENCH_CHILDREN comments already
// (a list; default 10,1000), after a backfill, whose reads it reports too.
// Past reconcileMost comments the backfill is seedParts instead.
func BenchmarkAggregateChange(b *testing.B) {
	sizes := cmpOr(os.Getenv("TALLY_BENCH_CHILDREN"), "10,1000")
	for _, size := range strings.Split(sizes, ",") {
		n, err := strconv.Atoi(size)
		if err != nil {
			b.Fatalf("TALLY_BENCH_CHILDREN=%s: %v", sizes, err)
		}
		b.Run(size, func(b *testing.B) {
			for b.Loop() {
				c := changeCost(b, n, 6)
				b.ReportMetric(c.reads, "reads/change")
				b.ReportMetric(c.writes, "writes/change")
				b.ReportMetric(float64(c.parts), "parts")
				if !c.seeded {
					b.ReportMetric(float64(c.backfill), "backfill-reads")
				}
			}
		})
	}
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// cost is what Rollup read and wrote per new comment of a post.
type cost struct {
	existing, parts int
	backfill        int64 // reads of the reconcile that backfilled the post
	seeded          bool  // the parts were written as a reconcile would (seedParts), not by one
	reads, writes   float64
}

// changeCost creates a post with existing comments, backfills its count
// with a reconcile, then adds added comments one at a time, each one's
// event handled by a Rollup whose Firestore operations are counted, and
// checks the count at the end.
func changeCost(t testing.TB, existing, added int) cost {
	ctx := context.Background()
	client, l, name := newPost(t, "posts:comments=count(comments)")
	comments := client.Doc(name).Collection("comments")
	ops := &opcount.Ops{}
	counted, err := opcount.Client(ctx, os.Getenv("FIRESTORE_EMULATOR_HOST"), emulatortest.Project, ops)
	if err != nil {
		t.Fatal(err)
	}
	defer counted.Close()
	folder := counting.NewFolder(counted, l, 50*time.Millisecond)
	seeded := existing > reconcileMost
	if seeded { // the reconcile of the empty post, whose parts seedParts replaces
		if _, err := folder.Reconcile(ctx, name); err != nil {
			t.Fatal(err)
		}
	}
	ids := createChildren(t, client, comments, existing)
	ops.Reset()
	if seeded {
		seedParts(t, client, name, ids)
	} else if _, err := folder.Reconcile(ctx, name); err != nil {
		t.Fatal(err)
	}
	c := cost{existing: existing, backfill: ops.Reads(), seeded: seeded}
	p, err := folder.Read(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	c.parts = len(p.Parts["comments"])
	for key, part := range p.Parts["comments"] {
		if part.N > counting.PartMax {
			t.Errorf("part %s holds %d, past %d", key, part.N, counting.PartMax)
		}
	}
	if got := p.Aggregates["comments"]; got != int64(existing) {
		t.Fatalf("comments = %v after the backfill, want %d", got, existing)
	}
	// The emulator scans the whole collection for a part's aggregation
	// (about 20 s at 1,000,000 comments), where Firestore reads the part's
	// index entries only: a fold may take past its bound, and a handler
	// wait past the default hold.
	h := New(counted, Config{Layout: l, Project: emulatortest.Project, Window: 50 * time.Millisecond, Hold: 10 * time.Minute})
	h.tracker.foldBound = 10 * time.Minute
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
	c.reads, c.writes = float64(ops.Reads())/float64(added-1), float64(ops.Writes())/float64(added-1)
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
	return c
}
