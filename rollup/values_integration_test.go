package rollup

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/firestore"
	"cloud.google.com/go/firestore/apiv1/firestorepb"

	"github.com/tallycounters/tally/internal/fold"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/testkit/layouttest"
	"github.com/tallycounters/tally/internal/tools/eventarc"
)

// allForms declares every aggregate form over a post's comments.
const allForms = "posts:likes,comments=count(comments),shown=count(comments where hidden == false)," +
	"score=sum(comments.score),stars=avg(comments.stars),shownScore=sum(comments.score where hidden == false)," +
	"best=max(comments.score),worst=min(comments.score where hidden == false)"

// oddIDs are ids Firestore takes that are no automatic id's.
var oddIDs = []string{"alice@example.com", "a b", "x:y", "a+b", "100%", "%41", "caf\u00e9", "\U0001F600", "\u65e5\u672c", "..."}

// TestAggregatesEqualFirestores: a post past a part, whose comments have
// ids of any shape (at the parts' boundaries too) and values of any kind
// (integers past int64 and back, doubles, NaN, the infinities, strings,
// none), holds each aggregate as Firestore's own aggregation over the
// comments gives it: after each comment's event, after edits and deletes,
// and after a reconcile from scratch.
func TestAggregatesEqualFirestores(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	client, l, name := newPost(t, allForms)
	comments := client.Doc(name).Collection("comments")
	h := New(client, Config{Layout: layouttest.Public(l), Project: emulatortest.Project, Spacing: testWindow})
	write := func(id string, c map[string]any) {
		t.Helper()
		ref := comments.Doc(id)
		var err error
		if c == nil {
			_, err = ref.Delete(ctx)
		} else {
			_, err = ref.Set(ctx, c)
		}
		if err != nil {
			t.Fatal(err)
		}
		snap, err := ref.Get(ctx)
		if err != nil && snap == nil {
			t.Fatal(err)
		}
		var e = eventarc.Written(emulatortest.Project, "(default)", nil, eventarc.Snapshot(snap))
		if c == nil {
			e = eventarc.Written(emulatortest.Project, "(default)", &eventarc.Doc{Path: name + "/comments/" + id, Updated: time.Now().Add(-time.Second)}, nil)
		}
		if err := h.Handle(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	values := []any{int64(1), int64(math.MaxInt64), int64(-7), 2.5, "five", nil, math.Inf(1), math.Inf(-1)}
	comment := func(i int) map[string]any {
		c := map[string]any{"hidden": i%3 == 0, "score": values[i%len(values)]}
		if i%5 != 0 {
			c["stars"] = int64(1 + i%5)
		}
		return c
	}
	var ids []string
	for i, n := range rand.Perm(10000)[:1100] {
		ids = append(ids, fmt.Sprintf("%s-%04d", oddIDs[i%len(oddIDs)], n))
	}
	// Past a part, at once, then one at a time.
	bw := client.BulkWriter(ctx)
	for i, id := range ids[:1050] {
		if _, err := bw.Set(comments.Doc(id), comment(i)); err != nil {
			t.Fatal(err)
		}
	}
	bw.End()
	for i, id := range ids[1050:] {
		write(id, comment(1050+i))
	}
	check(t, client, name, comments.Query, "after the comments")

	// Children at the parts' boundaries, a NaN, edits and deletes.
	p, err := fold.NewFolder(client, l, testWindow).Read(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Parts["comments"]) < 2 {
		t.Fatalf("%d comments in %d part(s); want them split", len(ids), len(p.Parts["comments"]))
	}
	for key := range p.Parts["comments"] {
		if lo := strings.TrimPrefix(key, "r"); lo != "" {
			write(lo, map[string]any{"score": int64(3), "hidden": false})
			write(lo+"!", map[string]any{"score": int64(4), "stars": 2.0})
		}
	}
	write(ids[7], map[string]any{"score": int64(-1), "stars": math.NaN()})
	check(t, client, name, comments.Query, "with a NaN")
	write(ids[7], nil)
	for i := 10; i < 60; i += 7 {
		write(ids[i], nil)
		write(ids[i+1], map[string]any{"score": "no longer a number", "hidden": true})
	}
	check(t, client, name, comments.Query, "after edits and deletes")

	// A reconcile from scratch agrees.
	if _, err := fold.NewFolder(client, l, testWindow).Reconcile(ctx, name); err != nil {
		t.Fatal(err)
	}
	check(t, client, name, comments.Query, "after a reconcile")
}

// check fails unless the post's aggregates are Firestore's own over q,
// and its greatest and least a scan's.
func check(t testing.TB, client *firestore.Client, name string, q firestore.Query, when string) {
	t.Helper()
	ctx := context.Background()
	res, err := q.NewAggregationQuery().WithCount("n").WithSum("score", "s").Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	avg, err := q.NewAggregationQuery().WithAvg("stars", "a").Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	visible := q.Where("hidden", "==", false)
	shown, err := visible.NewAggregationQuery().WithCount("n").WithSum("score", "s").Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"comments": pbValue(res["n"]), "score": pbValue(res["s"]), "stars": pbValue(avg["a"]), "shown": pbValue(shown["n"]),
		"shownScore": pbValue(shown["s"]), "best": scanExtreme(t, q, "score", 1), "worst": scanExtreme(t, visible, "score", -1)}
	snap, err := client.Doc(name).Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for field, w := range want {
		if got := snap.Data()[field]; !sameAggregate(got, w) {
			t.Errorf("%s: %s = %v (%T), Firestore's own %v (%T)", when, field, got, got, w, w)
		}
	}
}

// pbValue is an aggregation's result as the firestore package reads a
// field: an int64, a float64, or nil.
func pbValue(v any) any {
	switch x := v.(*firestorepb.Value).GetValueType().(type) {
	case *firestorepb.Value_IntegerValue:
		return x.IntegerValue
	case *firestorepb.Value_DoubleValue:
		return x.DoubleValue
	}
	return nil
}

// sameAggregate compares aggregate values: an int64 exactly, a float64 to a part
// in 10^9 (the emulator's average is rounded), NaN to NaN.
func sameAggregate(a, b any) bool {
	fa, aok := a.(float64)
	fb, bok := b.(float64)
	if aok && bok {
		return fa == fb || math.IsNaN(fa) && math.IsNaN(fb) || math.Abs(fa-fb) <= 1e-9*math.Abs(fb)
	}
	return a == b
}
