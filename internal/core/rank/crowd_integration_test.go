package rank_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/internal/core/rank"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/tools/opcount"
)

// crowdBase is the least value of the crowded cell: 2^20, whose cell
// spans 8,192 integers.
const crowdBase = 1 << 20

// TestCrowdedCellRanksInThreeReads: where over a thousand documents crowd
// into one cell, every rank still costs at most three reads and is
// exact, as the cell's values move inside it, as a part of it grows past
// a count() read's 1,000, and as the cell empties below that again; and
// a value's standing spans at most one part of the cell.
func TestCrowdedCellRanksInThreeReads(t *testing.T) {
	t.Parallel()
	c, ops := emulatortest.CountingClient(t)
	ctx := context.Background()
	b := rank.NewBoard(emulatortest.ID(t), "likes", firestore.FieldPath{"_tally"}, false, true)
	r := rand.New(rand.NewPCG(3, 4))
	values := map[string]int64{"top": 3 * crowdBase, "low": 5}
	for i := range 1600 {
		values[fmt.Sprintf("p%04d", i)] = crowdBase + r.Int64N(8192)
	}
	for i := range 40 { // a tie
		values[fmt.Sprintf("tie%02d", i)] = crowdBase + 100
	}
	write(t, c, b, values)
	s := rank.Summary{Cells: map[int64]int64{}, Of: int64(len(values)), AsOf: time.Now()}
	for _, v := range values {
		s.Cells[b.Grid.Cell(float64(v))]++
	}
	if err := rank.Seed(ctx, c, b, s); err != nil {
		t.Fatal(err)
	}
	checkRanks(t, c, ops, b, values)

	// 1,100 of them move to values within 300 of each other, in the cell
	for i := range 1100 {
		values[fmt.Sprintf("p%04d", i)] = crowdBase + 4000 + r.Int64N(300)
	}
	write(t, c, b, values)
	checkRanks(t, c, ops, b, values)

	// all but 600 leave the board
	var gone []string
	for i := 600; i < 1600; i++ {
		gone = append(gone, fmt.Sprintf("p%04d", i))
	}
	for i := range 40 {
		gone = append(gone, fmt.Sprintf("tie%02d", i))
	}
	remove(t, c, b, values, gone)
	s = checkRanks(t, c, ops, b, values)
	if len(s.Crowds) != 0 {
		t.Errorf("the summary keeps %d crowds after its cells hold at most 1,000 each", len(s.Crowds))
	}
}

// write writes each document's value and the cell it is counted in.
func write(t *testing.T, c *firestore.Client, b rank.Board, values map[string]int64) {
	t.Helper()
	bw := c.BulkWriter(context.Background())
	for id, v := range values {
		data := map[string]any{"likes": v, "_tally": map[string]any{"rank": map[string]any{"likes": b.Grid.Cell(float64(v))}}}
		if _, err := bw.Set(c.Collection(b.Collection).Doc(id), data); err != nil {
			t.Fatal(err)
		}
	}
	bw.End()
}

// remove deletes the documents, each with its move off the board.
func remove(t *testing.T, c *firestore.Client, b rank.Board, values map[string]int64, ids []string) {
	t.Helper()
	bw := c.BulkWriter(context.Background())
	for _, id := range ids {
		doc := b.Collection + "/" + id
		m := rank.Moved(b, doc, b.Grid.Cell(float64(values[id])), nil, "gone")
		if _, err := bw.Create(m.Ref(c), m.Data()); err != nil {
			t.Fatal(err)
		}
		if _, err := bw.Delete(c.Doc(doc)); err != nil {
			t.Fatal(err)
		}
		delete(values, id)
	}
	bw.End()
}

// checkRanks settles the board and checks the place of every tenth
// document, and of the crowded cell's edges, against values: exact, in at
// three reads, billed as told; and the standing of values across the cell. It
// answers the summary.
func checkRanks(t *testing.T, c *firestore.Client, ops *opcount.Ops, b rank.Board, values map[string]int64) rank.Summary {
	t.Helper()
	ctx := context.Background()
	ops.Reset()
	began := time.Now()
	s, err := rank.SettleNow(ctx, c, b)
	if err != nil {
		t.Fatal(err)
	}
	settled, took := ops.Reads(), time.Since(began)
	place := func(v float64) int64 {
		n := int64(1)
		for _, w := range values {
			if float64(w) > v {
				n++
			}
		}
		return n
	}
	i, reads := 0, 0
	for id, v := range values {
		if i++; i%10 != 0 && id != "low" && id != "top" && id != "tie00" && id != "p0000" {
			continue
		}
		ops.Reset()
		p, err := rank.Read(ctx, c, b, b.Collection+"/"+id)
		if err != nil {
			t.Fatalf("rank %s: %v", id, err)
		}
		billed := int(ops.Reads())
		if want := place(float64(v)); p.Rank != want || p.Of != int64(len(values)) || billed > 3 || p.Reads != billed {
			t.Fatalf("%s (%d): #%d of %d, %d reads billed and %d told; want #%d of %d in at most 3", id, v, p.Rank, p.Of, billed, p.Reads, want, len(values))
		}
		reads = max(reads, billed)
	}
	for v := float64(crowdBase - 1); v < crowdBase+8200; v += 37 {
		st := s.StandingOf(b, v)
		if truth := place(v); truth < st.Best || truth > st.Worst || st.Worst-st.Best > rank.CrowdPart {
			t.Fatalf("standing of %v: #%d to #%d, true place %d", v, st.Best, st.Worst, truth)
		}
	}
	parts := 0
	for _, cr := range s.Crowds {
		parts += len(cr.Bounds) + 1
	}
	t.Logf("%d documents, %d crowded cells in %d parts: at most %d reads a rank; the summary's settling read %d and took %v (a spacing's wait included)",
		len(values), len(s.Crowds), parts, reads, settled, took.Round(time.Millisecond))
	return s
}
