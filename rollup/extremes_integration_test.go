package rollup

import (
	"context"
	"math"
	"math/big"
	"slices"
	"testing"

	"cloud.google.com/go/firestore"
	"google.golang.org/api/iterator"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/fold"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/testkit/layouttest"
	"github.com/tallycounters/tally/internal/tools/eventarc"
)

// scanExtreme reads every document of q, and answers the greatest (sign
// 1) or least (sign -1) finite number among their field's values, an
// int64 or a float64 as held (an integer over an equal double), or nil
// over none: what max() or min() of it is.
func scanExtreme(t testing.TB, q firestore.Query, field string, sign int) any {
	t.Helper()
	var best any
	it := q.Documents(context.Background())
	defer it.Stop()
	for {
		snap, err := it.Next()
		if err == iterator.Done {
			return best
		}
		if err != nil {
			t.Fatal(err)
		}
		v := snap.Data()[field]
		x, ok := exactNumber(v)
		if !ok {
			continue
		}
		if best == nil {
			best = v
			continue
		}
		b, _ := exactNumber(best)
		_, isInt := v.(int64)
		if c := x.Cmp(b); c*sign > 0 || c == 0 && isInt {
			best = v
		}
	}
}

// exactNumber is v as a big.Float, if it is an integer or a finite double.
func exactNumber(v any) (*big.Float, bool) {
	switch x := v.(type) {
	case int64:
		return new(big.Float).SetInt64(x), true
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, false
		}
		return big.NewFloat(x), true
	}
	return nil, false
}

// TestAggregateDeclaredBesideOthers: a greatest declared beside a count
// that a post already keeps in several parts is over every part after
// the next comment's event, not only over the part that holds it.
func TestAggregateDeclaredBesideOthers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	client, before, name := newPost(t, "posts:comments=count(comments)")
	comments := client.Doc(name).Collection("comments")
	ids := createChildren(t, client, comments, 1500)
	// The best comment is the first of all ids (in the first part), the
	// new one the last (in the last part).
	if _, err := comments.Doc(slices.Min(ids)).Set(ctx, map[string]any{"score": int64(1000)}, firestore.MergeAll); err != nil {
		t.Fatal(err)
	}
	if _, err := fold.NewFolder(client, before, testWindow).Reconcile(ctx, name); err != nil {
		t.Fatal(err)
	}
	after := before
	var err error
	if after.Docs, err = core.ParseCounts("posts:comments=count(comments),best=max(comments.score)"); err != nil {
		t.Fatal(err)
	}
	h := New(client, Config{Layout: layouttest.Public(after), Project: emulatortest.Project, Spacing: testWindow})
	ref := comments.Doc("zzzzzzzzzzzzzzzzzzzz")
	wr, err := ref.Create(ctx, map[string]any{"score": int64(-1)})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Handle(ctx, eventarc.Written(emulatortest.Project, "(default)", nil, eventarc.IntDoc(name+"/comments/"+ref.ID, "score", -1, wr.UpdateTime))); err != nil {
		t.Fatal(err)
	}
	p, err := fold.NewFolder(client, after, testWindow).Read(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	if want := scanExtreme(t, comments.Query, "score", 1); p.Aggregates["best"] != want || want != int64(1000) || len(p.Parts["comments"]) < 2 {
		t.Errorf("best = %v over %d part(s); a scan's %v", p.Aggregates["best"], len(p.Parts["comments"]), want)
	}
}
