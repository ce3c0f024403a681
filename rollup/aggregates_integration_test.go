package rollup

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tallycounters/tally/internal/core/aggregate"
	"github.com/tallycounters/tally/internal/fold"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/testkit/layouttest"
	"github.com/tallycounters/tally/internal/tools/eventarc"
	"github.com/tallycounters/tally/internal/tools/opcount"
)

// TestAggregatePartsBoundTheCost: a post with 3,000 comments, backfilled
// by a reconcile, holds them in parts of at most aggregate.PartMax; then
// each new comment's event refolds only its part: one aggregation read
// and one write of the post per comment, whatever the post's size, and
// the count stays exact. (A new comment's own write is one more write;
// the budget, 3 reads and 3 writes a comment in all, holds even where
// Rollup reads the post again before each fold.)
func TestAggregatePartsBoundTheCost(t *testing.T) {
	t.Parallel()
	c := changeCost(t, countOnly, 3000, 6)
	t.Logf("per new comment, on a post of %d in %d parts: %.2f reads and %.2f writes by Rollup", c.existing, c.parts, c.reads, c.writes)
	if c.reads > 2 || c.writes > 1 {
		t.Errorf("per new comment: %.2f reads and %.2f writes by Rollup; want at most 2 (an aggregation of one part, a read of the post) and 1", c.reads, c.writes)
	}
}

// TestEveryFormBoundsTheCost: with every aggregate form declared over a
// post's comments past a part, a new comment's event reads its part's
// records, the comment itself, and its part's count and filtered count,
// and writes the part's records and the post: 4 reads and 2 writes by
// Rollup, whatever the post's size, and each form equals Firestore's own.
func TestEveryFormBoundsTheCost(t *testing.T) {
	t.Parallel()
	c := changeCost(t, allForms, 1500, 6)
	t.Logf("per new comment, on a post of %d in %d parts: %.2f reads and %.2f writes by Rollup", c.existing, c.parts, c.reads, c.writes)
	if c.reads > 4 || c.writes > 2 {
		t.Errorf("per new comment: %.2f reads and %.2f writes by Rollup; want at most 4 and 2", c.reads, c.writes)
	}
}

// The declarations the cost is measured for: a count of comments, every
// form, and a greatest and a least beside the count.
const (
	countOnly    = "posts:comments=count(comments)"
	extremesOnly = "posts:comments=count(comments),best=max(comments.score),worst=min(comments.score)"
)

// BenchmarkAggregateChange reports what Rollup reads and writes for each
// new comment of a post that has TALLY_BENCH_CHILDREN comments already
// (a list; default 10,1000), after a backfill, whose reads it reports too,
// with a count of comments declared (count), with every form (all), and
// with a greatest and a least beside the count (extremes).
// Past reconcileMost comments the backfill of a count is seedParts instead.
func BenchmarkAggregateChange(b *testing.B) {
	sizes := cmpOr(os.Getenv("TALLY_BENCH_CHILDREN"), "10,1000")
	for _, forms := range []struct{ name, spec string }{{"count", countOnly}, {"all", allForms}, {"extremes", extremesOnly}} {
		for _, size := range strings.Split(sizes, ",") {
			n, err := strconv.Atoi(size)
			if err != nil {
				b.Fatalf("TALLY_BENCH_CHILDREN=%s: %v", sizes, err)
			}
			if forms.spec != countOnly && n > reconcileMost {
				continue // no seeding of records: a backfill reads every comment
			}
			b.Run(forms.name+"/"+size, func(b *testing.B) {
				for b.Loop() {
					reportCost(b, changeCost(b, forms.spec, n, 6))
				}
			})
		}
	}
}

// reportCost reports c's figures on b.
func reportCost(b *testing.B, c cost) {
	b.ReportMetric(c.reads, "reads/change")
	b.ReportMetric(c.writes, "writes/change")
	b.ReportMetric(float64(c.parts), "parts")
	if !c.seeded {
		b.ReportMetric(float64(c.backfill), "backfill-reads")
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

// changeCost creates a post with existing comments, with the aggregates
// spec declares, backfills them with a reconcile, then adds added
// comments one at a time, each one's event handled by a Rollup whose
// Firestore operations are counted, and checks the aggregates at the end
// against Firestore's own.
func changeCost(t testing.TB, spec string, existing, added int) cost {
	ctx := context.Background()
	client, l, name := newPost(t, spec)
	comments := client.Doc(name).Collection("comments")
	ops := &opcount.Ops{}
	counted, err := opcount.Client(ctx, os.Getenv("FIRESTORE_EMULATOR_HOST"), emulatortest.Project, ops)
	if err != nil {
		t.Fatal(err)
	}
	defer counted.Close()
	folder := fold.NewFolder(counted, l, 50*time.Millisecond)
	seeded := existing > reconcileMost && spec == countOnly
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
		if part.N > aggregate.PartMax {
			t.Errorf("part %s holds %d, past %d", key, part.N, aggregate.PartMax)
		}
	}
	if got := p.Aggregates["comments"]; got != int64(existing) {
		t.Fatalf("comments = %v after the backfill, want %d", got, existing)
	}
	// The emulator scans the whole collection for a part's aggregation
	// (about 20 s at 1,000,000 comments), where Firestore reads the part's
	// index entries only: a fold may take past its bound, and a handler
	// wait past the default hold.
	h := New(counted, Config{Layout: layouttest.Public(l), Project: emulatortest.Project, Spacing: 50 * time.Millisecond, Hold: 10 * time.Minute})
	h.tracker.foldBound = 10 * time.Minute
	for i := range added {
		if i == 1 {
			ops.Reset() // the first event reads the post: this instance did not know it
		}
		ref := comments.NewDoc()
		wr, err := ref.Create(ctx, comment(ref.ID))
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
	switch spec {
	case allForms:
		check(t, client, name, comments.Query, "after the new comments")
	case extremesOnly:
		if best, worst := scanExtreme(t, comments.Query, "score", 1), scanExtreme(t, comments.Query, "score", -1); snap.Data()["best"] != best || snap.Data()["worst"] != worst {
			t.Errorf("best, worst = %v, %v; a scan's %v, %v", snap.Data()["best"], snap.Data()["worst"], best, worst)
		}
	}
	return c
}
