package counter_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/tallycounters/tally/counter"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
)

// TestNaNChildKeepsJobsRunning: a child whose summed field is NaN (as an
// admin or an import can write it; tally's rules refuse it from a
// client) makes its document's sum NaN, as Firestore's own sum() gives.
// Reconcile of that document, a part of Reconcile holding it and
// ReconcileAll each answer without a panic, and the document keeps a
// place on the board: last, below a document with no points.
func TestNaNChildKeepsJobsRunning(t *testing.T) {
	t.Parallel()
	users := "u" + emulatortest.ID(t)
	c, fs, _ := docsClient(t, users+":points=sum(games.points),rank(points)")
	ctx := context.Background()
	points := map[string][]float64{"nan": {3, math.NaN()}, "zero": {0}, "five": {2, 3}}
	var names []string
	for u, games := range points {
		name := users + "/" + u
		names = append(names, name)
		if _, err := fs.Doc(name).Create(ctx, map[string]any{"name": u}); err != nil {
			t.Fatal(err)
		}
		for i, p := range games {
			if _, err := fs.Doc(name).Collection("games").NewDoc().Create(ctx, map[string]any{"points": p, "n": i}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := c.Reconcile(ctx, users+"/nan"); err != nil {
		t.Fatalf("Reconcile of the NaN user: %v", err)
	}
	rep, err := c.RunPart(ctx, counter.Part{Job: counter.JobReconcile, At: time.Now(), Seq: 1, Names: names},
		func(name string, err error) { t.Errorf("part: %s: %v", name, err) })
	if err != nil || rep.Failed != 0 {
		t.Fatalf("RunPart = %+v, %v", rep, err)
	}
	if err := c.ReconcileAll(ctx, func(d counter.Drift, err error) {
		if err != nil {
			t.Errorf("ReconcileAll: %s: %v", d.Counter, err)
		}
	}); err != nil {
		t.Fatalf("ReconcileAll: %v", err)
	}
	snap, err := fs.Doc(users + "/nan").Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := snap.Data()["points"].(float64); !math.IsNaN(v) {
		t.Errorf("the NaN user's points = %v, want NaN, as Firestore's sum() gives", snap.Data()["points"])
	}
	want := map[string]int64{"five": 1, "zero": 2, "nan": 3}
	for u, rank := range want {
		p, err := c.Rank(ctx, users+"/"+u, "points")
		if err != nil || p.Rank != rank || p.Of != 3 {
			t.Errorf("Rank of %s = #%d of %d, %v; want #%d of 3", u, p.Rank, p.Of, err, rank)
		}
	}
}
