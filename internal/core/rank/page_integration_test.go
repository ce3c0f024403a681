package rank_test

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/internal/core/rank"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/tools/opcount"
)

// TestPagesOfABoard: any page of a board of 10,000 documents is the
// documents at its places, as a sort of every document's value says,
// with their places (ties sharing one), in at most 1 + the documents of
// its cell or part above it + its own reads, billed as told: across
// cells, in a crowded cell cut into parts, in a run of 1,500 equal values
// (one crowded cell no cut divides), at the end, and past it.
func TestPagesOfABoard(t *testing.T) {
	t.Parallel()
	emulatortest.Long(t, "writes 10,000 documents")
	c, ops := emulatortest.CountingClient(t)
	b := rank.NewBoard(emulatortest.ID(t), "likes", firestore.FieldPath{"_tally"}, false, true)
	r := rand.New(rand.NewPCG(7, 8))
	values := map[string]any{}
	add := func(prefix string, n int, v func() int64) {
		for i := range n {
			values[fmt.Sprintf("%s%05d", prefix, i)] = v()
		}
	}
	add("zero", 1500, func() int64 { return 0 })                           // one value, crowded
	add("few", 3000, func() int64 { return r.Int64N(21) })                 // ties in cells of one value
	add("crowd", 4000, func() int64 { return crowdBase + r.Int64N(8192) }) // one cell, cut into parts
	add("wide", 1400, func() int64 { return r.Int64N(1_000_000) })         // cells of a few each
	add("neg", 100, func() int64 { return -1 - r.Int64N(1000) })           // below zero
	seed(t, c, b, values, time.Time{})
	checkPages(t, c, ops, b, values, []int{0, 1, 19, 20, 999, 1000, 1001, 3333, 5000, 5555, 7000, 8200, 8499, 8500, 9000, 9899, 9990, 9999, 10_000, 10_050})
}

// TestPagesPastEveryNumber: on a board of doubles, +Inf comes first and
// NaN last, after -Inf, each tie sharing its place; a page that starts
// among the numbers runs on into NaN's documents, and one may start
// among them.
func TestPagesPastEveryNumber(t *testing.T) {
	t.Parallel()
	c, ops := emulatortest.CountingClient(t)
	b := rank.NewBoard(emulatortest.ID(t), "hot", firestore.FieldPath{"_tally"}, false, false)
	values := map[string]any{}
	for i := range 30 {
		values[fmt.Sprintf("inf%02d", i%3)] = math.Inf(1)
		values[fmt.Sprintf("d%02d", i)] = float64(i%7) / 4
		values[fmt.Sprintf("i%02d", i)] = int64(i % 5)
		values[fmt.Sprintf("minf%02d", i%4)] = math.Inf(-1)
		values[fmt.Sprintf("nan%02d", i%6)] = math.NaN()
	}
	seed(t, c, b, values, time.Time{})
	checkPages(t, c, ops, b, values, []int{0, 2, 3, 40, 59, 60, 66, 70, 72, 75, 76, 80})
}

// checkPages reads pages of 20 documents at each offset, and of 1 and
// 100 at a third of them, and
// checks each against the documents sorted by value, from the greatest
// (ties by id, from the last, as Firestore orders a descending query).
func checkPages(t *testing.T, c *firestore.Client, ops *opcount.Ops, b rank.Board, values map[string]any, offsets []int) {
	t.Helper()
	ctx := context.Background()
	type doc struct {
		id string
		v  float64
		n  any
	}
	var sorted []doc
	for id, v := range values {
		f, _ := rank.Value(v)
		sorted = append(sorted, doc{id, f, v})
	}
	slices.SortFunc(sorted, func(x, y doc) int { // cmp.Compare puts NaN below every number
		return cmp.Or(cmp.Compare(y.v, x.v), cmp.Compare(y.id, x.id))
	})
	ranks := make([]int64, len(sorted))
	for i, d := range sorted {
		ranks[i] = int64(i + 1)
		if i > 0 && cmp.Compare(d.v, sorted[i-1].v) == 0 {
			ranks[i] = ranks[i-1]
		}
	}
	most := 0
	for _, limit := range []int{1, 20, 100} {
		for i, offset := range offsets {
			if limit != 20 && i%3 != 0 {
				continue // every offset in pages of 20; a third of them in the others
			}
			ops.Reset()
			p, err := rank.ReadPage(ctx, c, b, offset, limit)
			if err != nil {
				t.Fatalf("page of %d at %d: %v", limit, offset, err)
			}
			if billed := int(ops.Reads()); billed != p.Reads {
				t.Errorf("page of %d at %d: %d reads told, %d billed", limit, offset, p.Reads, billed)
			}
			if p.Of != int64(len(values)) {
				t.Fatalf("page of %d at %d: of %d, want %d", limit, offset, p.Of, len(values))
			}
			want := sorted[min(offset, len(sorted)):min(offset+limit, len(sorted))]
			if len(p.Entries) != len(want) {
				t.Fatalf("page of %d at %d: %d documents, want %d", limit, offset, len(p.Entries), len(want))
			}
			for i, e := range p.Entries {
				w := want[i]
				if e.Doc != b.Collection+"/"+w.id || e.Rank != ranks[offset+i] {
					t.Fatalf("page of %d at %d, #%d: %s at place %d (%v); want %s at %d (%v)", limit, offset, i, e.Doc, e.Rank, e.Value, w.id, ranks[offset+i], w.n)
				}
			}
			run := offset // where the run of equal values the page starts in starts
			for run > 0 && run < len(sorted) && ranks[run-1] == ranks[offset] {
				run--
			}
			if bound := 2 + limit + max(rank.CrowdPart-1, offset-run); p.Reads > bound {
				t.Errorf("page of %d at %d: %d reads, past %d", limit, offset, p.Reads, bound)
			}
			if limit == 20 {
				most = max(most, p.Reads)
			}
		}
	}
	t.Logf("%d documents: pages of 20 at %d offsets took at most %d reads", len(values), len(offsets), most)
}
