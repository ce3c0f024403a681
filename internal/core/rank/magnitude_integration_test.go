package rank_test

import (
	"context"
	"math"
	"math/big"
	"testing"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/internal/core/rank"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
)

// TestRanksAtEveryMagnitude: integers past 2^53, where neighbours share a
// float64, are ranked as integers; +Inf is first, -Inf last but for NaN,
// which Firestore orders below every number, and each infinity's ties
// share their place. Each document's place is checked against the values
// compared exactly, with the documents written as a fold writes them
// (their cells recorded) and the summary seeded from those cells.
func TestRanksAtEveryMagnitude(t *testing.T) {
	t.Parallel()
	c := emulatortest.Client(t)
	ctx := context.Background()
	for _, integers := range []bool{true, false} {
		b := rank.NewBoard("m"+emulatortest.ID(t), "likes", firestore.FieldPath{"_tally"}, false, integers)
		values := map[string]any{
			"max": int64(math.MaxInt64), "p62+1": int64(1<<62 + 1), "p62": int64(1 << 62), "p62-1": int64(1<<62 - 1),
			"p53+1": int64(1<<53 + 1), "p53": int64(1 << 53), "one": int64(1), "zero": int64(0),
			"m62": int64(-1 << 62), "m62-1": int64(-1<<62 - 1), "min": int64(math.MinInt64),
		}
		if !integers {
			values = map[string]any{
				"inf": math.Inf(1), "inf2": math.Inf(1), "big": math.MaxFloat64, "half": 0.5, "zero": 0.0,
				"small": -math.MaxFloat64, "minf": math.Inf(-1), "minf2": math.Inf(-1), "nan": math.NaN(),
			}
		}
		seed(t, c, b, values, time.Time{})
		for id, v := range values {
			want := int64(1)
			for _, w := range values {
				if above(w, v) {
					want++
				}
			}
			p, err := rank.Read(ctx, c, b, b.Collection+"/"+id)
			if err != nil || p.Rank != want || p.Of != int64(len(values)) {
				t.Errorf("%s (%v): #%d of %d, %v; want #%d of %d", id, v, p.Rank, p.Of, err, want, len(values))
			}
		}
	}
}

// above reports whether stored value a is above b in Firestore's order of
// numbers: NaN least, integers and floats compared exactly.
func above(a, b any) bool {
	exact := func(v any) (*big.Float, bool) {
		switch x := v.(type) {
		case int64:
			return new(big.Float).SetInt64(x), true
		case float64:
			if math.IsNaN(x) {
				return nil, false
			}
			return new(big.Float).SetFloat64(x), true
		}
		return nil, false
	}
	x, okA := exact(a)
	y, okB := exact(b)
	switch {
	case !okA:
		return false
	case !okB:
		return true
	}
	return x.Cmp(y) > 0
}

// seed writes each document's value and the cell it is counted in, as a
// fold writes them, and the board's summary of them as of asOf (zero: once
// they are written).
func seed(t *testing.T, c *firestore.Client, b rank.Board, values map[string]any, asOf time.Time) {
	t.Helper()
	s := rank.Summary{Cells: map[int64]int64{}, Of: int64(len(values))}
	bw := c.BulkWriter(context.Background())
	for id, v := range values {
		cell, ok := b.Grid.CellOf(v)
		if !ok {
			t.Fatalf("%v has no cell", v)
		}
		s.Cells[cell]++
		data := map[string]any{b.Field: v, "_tally": map[string]any{"rank": map[string]any{b.Field: cell}}}
		if _, err := bw.Set(c.Collection(b.Collection).Doc(id), data); err != nil {
			t.Fatal(err)
		}
	}
	bw.End()
	s.AsOf = asOf
	if asOf.IsZero() {
		s.AsOf = time.Now()
	}
	if err := rank.Seed(context.Background(), c, b, s); err != nil {
		t.Fatal(err)
	}
}
