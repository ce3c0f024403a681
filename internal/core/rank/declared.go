package rank

import (
	"fmt"
	"slices"
	"strings"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/internal/core/aggregate"
	"github.com/tallycounters/tally/internal/core/bytime"
)

// KindCount is what a count is, among the kinds of fields tally keeps.
const KindCount = "count"

// Declared is what a declaration in TALLY_COUNTS says of one collection's
// fields: its counts, aggregates and windows, and the fields it ranks by.
type Declared struct {
	Collection string
	Counts     []string
	Aggregates []aggregate.Aggregate
	Windows    []bytime.Window
	Ranks      []string
}

// kindOf says what f is on the collection's documents: KindCount, an
// aggregate's op, a window's or trend's kind, or "" for none of tally's.
func (d Declared) kindOf(f string) string {
	if slices.Contains(d.Counts, f) {
		return KindCount
	}
	for _, a := range d.Aggregates {
		if a.Field == f {
			return a.Op
		}
	}
	for _, w := range d.Windows {
		if w.Field == f {
			return w.Kind
		}
	}
	return ""
}

// Check checks the fields d ranks by: each one of those tally keeps there,
// none twice, none a window, on a collection named without '*' (wild is
// true otherwise, or for one document).
func (d Declared) Check(wild bool) error {
	for i, f := range d.Ranks {
		switch kind := d.kindOf(f); {
		case slices.Contains(d.Ranks[:i], f):
			return fmt.Errorf("rank(%s) is given twice", f)
		case wild:
			return fmt.Errorf("rank(%s): rank is kept among one collection's documents; name it without '*' (posts, or users/u1/posts)", f)
		case kind == "":
			return fmt.Errorf("rank(%s): %q is none of the fields tally keeps there; rank a count, an aggregate or a trend declared beside it", f, f)
		case kind == bytime.KindPer || kind == bytime.KindOver:
			return fmt.Errorf("rank(%s): a window falls back at its boundaries for every document at once, which would move each of them between ranges; rank a count, an aggregate or a trend", f)
		}
	}
	return nil
}

// Boards are the boards d declares, whose documents keep their
// bookkeeping in the map field bookkeeping.
func (d Declared) Boards(bookkeeping string) []Board {
	var out []Board
	for _, f := range d.Ranks {
		kind := d.kindOf(f)
		integers := kind == KindCount || kind == aggregate.OpCount
		out = append(out, NewBoard(d.Collection, f, firestore.FieldPath{bookkeeping}, kind == bytime.KindTrend, integers))
	}
	return out
}

// Find is the board of collection by field among boards.
func Find(boards []Board, collection, field string) (Board, error) {
	var names []string
	for _, b := range boards {
		if b.Collection == collection && b.Field == field {
			return b, nil
		}
		names = append(names, b.String())
	}
	if len(names) == 0 {
		return Board{}, fmt.Errorf("no rank is declared: declare one in TALLY_COUNTS, as posts:likes,rank(likes)")
	}
	return Board{}, fmt.Errorf("%s is not ranked by %s; ranked: %s", collection, field, strings.Join(names, ", "))
}
