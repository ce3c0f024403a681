package rank

import (
	"context"
	"errors"
	"math"
	"time"

	"cloud.google.com/go/firestore"
)

// Standing is where a value stands on a board, told by its summary alone
// (one read), exact at AsOf: a document of that value would be ranked
// Best, 1 + the documents in cells above the value's; or, where its cell
// holds more than one value, anywhere from Best to Worst, Best + the
// documents in its cell (the document itself may be one of them). Best
// and Worst are the same where the cell holds one value, as each integer
// from -255 to 255 does on a board of integers. A value below every
// document's stands last, with the last: Best and Worst are at most Of.
type Standing struct {
	Value       float64
	Best, Worst int64
	Of          int64
	AsOf        time.Time
}

// Exact reports whether the standing is one place.
func (s Standing) Exact() bool { return s.Best == s.Worst }

// Top is the share of the board at or above the value's worst place, in
// percent: a value whose place is 3 of 100 or better is in the top 3%.
func (s Standing) Top() float64 { return Place{Rank: s.Worst, Of: s.Of}.Top() }

// StandingOf is where v stands on b by the summary s.
func (s Summary) StandingOf(b Board, v float64) Standing {
	if v == 0 {
		v = 0 // -0 is 0
	}
	c := b.Grid.Cell(v)
	st := Standing{Value: v, Best: 1 + s.Above(c), Of: s.Of, AsOf: s.AsOf}
	st.Worst = st.Best
	if !b.Grid.Single(c, b.Integers) {
		above, in := s.Crowds[c].counts(v, s.Cells[c])
		st.Best += above
		st.Worst = st.Best + in
	}
	if s.Of > 0 {
		st.Best, st.Worst = min(st.Best, s.Of), min(st.Worst, s.Of)
	}
	return st
}

// ErrNaN refuses the standing of NaN: a document holding NaN is last on
// a board, but NaN is no value to ask about.
var ErrNaN = errors.New("rank: NaN is not a number to stand anywhere: give a number (Infinity and -Infinity too)")

// StandingAt reads b's summary (one read) and tells where v stands on it.
func StandingAt(ctx context.Context, c *firestore.Client, b Board, v float64) (Standing, error) {
	if math.IsNaN(v) {
		return Standing{}, ErrNaN
	}
	s, err := ReadSummary(ctx, c, b)
	if err != nil {
		return Standing{}, err
	}
	return s.StandingOf(b, v), nil
}
