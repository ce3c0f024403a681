package stack

import (
	"context"
	"net/http"
	"testing"

	"google.golang.org/api/iterator"

	"github.com/tallycounters/tally/counter"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
)

// TestNamedDatabase: on a database other than (default) (TALLY_DATABASE),
// an increment through Increment, the emulator's delivery of its shard's
// event and of a comment's to Rollup, the fold with its window and its
// aggregate, and the Go client's reconcile all work on that database, and
// nothing is written to (default).
func TestNamedDatabase(t *testing.T) {
	t.Parallel()
	paths := emulatortest.RequirePaths(t)
	cfg := envConfig(t, map[string]string{
		"TALLY_DATABASE":      "tallies",
		"TALLY_COUNTS":        "posts:likes,likes_m=likes per minute,comments=count(comments)",
		"TALLY_ROLLUP_WINDOW": "300ms",
	})
	s, byDefault := startConfig(t, paths, cfg)
	ctx := context.Background()
	db := s.Functions.Client // the functions' own, on tallies
	name := "posts/" + emulatortest.ID(t)
	doc := db.Doc(name)
	if _, err := doc.Create(ctx, map[string]any{"title": "hello"}); err != nil {
		t.Fatal(err)
	}
	if code, body := post(t, s, `{"counter":"`+name+`","field":"likes","by":2}`); code != http.StatusOK {
		t.Fatalf("increment: %d %s", code, body)
	}
	for range 3 {
		if _, err := doc.Collection("comments").NewDoc().Create(ctx, map[string]any{"text": "hi"}); err != nil {
			t.Fatal(err)
		}
	}
	waitCounts(t, doc, map[string]int64{"likes": 2, "likes_m": 2, "comments": 3})

	admin := counter.New(db, counter.Options{Layout: counter.LayoutOf(cfg.Layout)})
	drifts, err := admin.Reconcile(ctx, name)
	if err != nil || len(drifts) == 0 || drifts[0].Field != "likes" || drifts[0].Sum != 2 {
		t.Errorf("Reconcile on tallies = %+v, %v; want likes 2", drifts, err)
	}
	for _, d := range drifts {
		if d.Drift != 0 {
			t.Errorf("Reconcile on tallies found %s off by %d", d.Field, d.Drift)
		}
	}
	it := byDefault.Collections(ctx)
	if c, err := it.Next(); err != iterator.Done {
		t.Errorf("(default) holds a collection: %v, %v", c, err)
	}
}
