package rank_test

import (
	"context"
	"testing"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/internal/core/rank"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
)

// TestRankOnAnIdleBoard: a board whose summary no move has changed for
// two hours (its as_of that old) answers every rank, through a store that
// refuses read times older than an hour, as Firestore does: the first
// read folds the summary again, and the reads after it find it fresh.
func TestRankOnAnIdleBoard(t *testing.T) {
	t.Parallel()
	plain := emulatortest.Client(t)
	c := emulatortest.Retaining(t, time.Hour)
	ctx := context.Background()
	b := rank.NewBoard("i"+emulatortest.ID(t), "likes", firestore.FieldPath{"_tally"}, false, true)
	seed(t, plain, b, map[string]any{"a": int64(7), "b": int64(3), "c": int64(3), "d": int64(0)}, time.Now().Add(-2*time.Hour))
	want := map[string]int64{"a": 1, "b": 2, "c": 2, "d": 4}
	for i, id := range []string{"a", "b", "c", "d"} {
		p, err := rank.Read(ctx, c, b, b.Collection+"/"+id)
		if err != nil || p.Rank != want[id] || p.Of != 4 {
			t.Fatalf("rank of %s on a board idle for 2 hours: #%d of %d, %v; want #%d of 4", id, p.Rank, p.Of, err, want[id])
		}
		if age := time.Since(p.AsOf); age > rank.Fresh {
			t.Errorf("rank of %s read at %v, %v ago", id, p.AsOf, age)
		}
		if folded := i == 0; folded != (p.Reads > 2) {
			t.Errorf("rank %d of %s: %d reads; only the first folds the summary", i, id, p.Reads)
		}
	}
}

// TestRankAfter: a rank asked for at a read time after a moment reads at
// one, though the board's summary is as of before it and no move waits:
// the summary is folded first, once; asked again, it is not.
func TestRankAfter(t *testing.T) {
	t.Parallel()
	c := emulatortest.Client(t)
	ctx := context.Background()
	b := rank.NewBoard("f"+emulatortest.ID(t), "likes", firestore.FieldPath{"_tally"}, false, true)
	seeded := time.Now().Add(-time.Minute)
	seed(t, c, b, map[string]any{"a": int64(7), "b": int64(3)}, seeded)
	after := time.Now()
	p, err := rank.ReadAfter(ctx, c, b, b.Collection+"/b", after)
	if err != nil || p.Rank != 2 || p.Of != 2 {
		t.Fatalf("rank of b after %v: #%d of %d, %v; want #2 of 2", after, p.Rank, p.Of, err)
	}
	if p.AsOf.Before(after) || p.Reads <= 2 {
		t.Errorf("read at %v in %d reads, asked for after %v (the summary was as of %v); want the summary folded first", p.AsOf, p.Reads, after, seeded)
	}
	again, err := rank.ReadAfter(ctx, c, b, b.Collection+"/b", after)
	if err != nil || !again.AsOf.Equal(p.AsOf) || again.Reads > 2 || again.Rank != 2 {
		t.Errorf("asked again: #%d as of %v in %d reads (%v); want #2 as of %v, with no fold", again.Rank, again.AsOf, again.Reads, err, p.AsOf)
	}
}

// TestRankFindsAnotherReadersFold: a reader whose summary another reader
// folded after it read it (its fold then finds the summary changed) reads
// the other's fold and ranks by it, as two ranks asked for at once on an
// idle board do; it does not answer that the summary changed.
func TestRankFindsAnotherReadersFold(t *testing.T) {
	t.Parallel()
	c := emulatortest.Client(t)
	ctx := context.Background()
	b := rank.NewBoard("o"+emulatortest.ID(t), "likes", firestore.FieldPath{"_tally"}, false, true)
	seed(t, c, b, map[string]any{"a": int64(7), "b": int64(3)}, time.Now().Add(-2*time.Hour))
	time.Sleep(rank.Spacing) // the seed's write of the summary a spacing old: it may be folded
	mine, err := rank.ReadSummary(ctx, c, b)
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := rank.Fold(ctx, c, b, mine)
	if err != nil {
		t.Fatal(err)
	}
	s, _, err := rank.Refresh(ctx, c, b, mine, time.Time{})
	if err != nil || !s.AsOf.Equal(theirs.AsOf) || s.Of != 2 {
		t.Errorf("refreshed a summary folded by another: %+v, %v; want theirs, as of %v", s, err, theirs.AsOf)
	}
}
