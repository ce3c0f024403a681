package stack

import (
	"context"
	"net/http"
	"testing"
	"time"

	"cloud.google.com/go/firestore"
	"google.golang.org/api/iterator"

	"github.com/tallycounters/tally/counter"
	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/testkit/layouttest"
	"github.com/tallycounters/tally/internal/testkit/tztest"
	"github.com/tallycounters/tally/setup"
)

// TestNamedDatabase: on a database other than (default) (TALLY_DATABASE),
// an increment through Increment, the emulator's delivery of its shard's
// event and of a comment's to Rollup, the fold with its window and its
// aggregate, the boundary job and Reconcile, each fanned out through the
// Pub/Sub emulator, and the Go client's reconcile all work on that
// database, and nothing is written to (default).
func TestNamedDatabase(t *testing.T) {
	t.Parallel()
	paths := emulatortest.RequirePaths(t)
	cfg := envConfig(t, map[string]string{
		"TALLY_DATABASE":      "tallies",
		"TALLY_COUNTS":        "posts:likes,likes_h=likes per hour,comments=count(comments)",
		"TALLY_ROLLUP_WINDOW": "300ms",
	})
	first, changes := tztest.Cycle(time.Now(), 6*time.Second, 15*time.Minute) // hours 6 s long
	var err error
	l := core.MustParse(cfg.Layout)
	if l.Zone, err = tztest.Location("Tally/Cycle", first, changes); err != nil {
		t.Fatal(err)
	}
	cfg.Layout = layouttest.Public(l)
	s, byDefault := startConfig(t, paths, cfg)
	if s.Fanout != setup.FanoutPubSub {
		t.Fatalf("the stack's jobs run %s, want through Pub/Sub", s.Fanout)
	}
	ctx := context.Background()
	db := s.Functions.Client // the functions' own, on tallies
	name := "posts/" + emulatortest.ID(t)
	doc := db.Doc(name)
	if _, err := doc.Create(ctx, map[string]any{"title": "hello"}); err != nil {
		t.Fatal(err)
	}
	if code, body := increment(t, s, `{"counter":"`+name+`","field":"likes","by":2}`); code != http.StatusOK {
		t.Fatalf("increment: %d %s", code, body)
	}
	for range 3 {
		if _, err := doc.Collection("comments").NewDoc().Create(ctx, map[string]any{"text": "hi"}); err != nil {
			t.Fatal(err)
		}
	}
	waitCounts(t, doc, map[string]int64{"likes": 2, "comments": 3})
	// The boundary job, at a start of an hour of the zone, moves the
	// window (a fold of an idle document in a later bucket takes its
	// next_boundary away: only the job makes one).
	emulatortest.Until(t, "the boundary job moves the window on tallies", func() (any, bool) {
		snap, err := doc.Get(ctx)
		if err != nil {
			t.Fatal(err)
		}
		book, _ := snap.Data()[core.FieldBookkeeping].(map[string]any)
		_, due := book[core.FieldNextBoundary]
		return snap.Data()["likes_h"], !due && snap.Data()["likes_h"] == int64(0)
	})
	// Reconcile, as the scheduler starts it, puts a drifted count right.
	if _, err := doc.Update(ctx, []firestore.Update{{Path: "likes", Value: 100}}); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(s.FunctionsURL+"/Reconcile", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /Reconcile: %d", resp.StatusCode)
	}
	waitCounts(t, doc, map[string]int64{"likes": 2})

	var drifts []counter.Drift
	admin := counter.New(db, counter.Options{Layout: cfg.Layout})
	drifts, err = admin.Reconcile(ctx, name)
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
