package counter

import (
	"context"
	"time"

	"github.com/tallycounters/tally/internal/core/rank"
)

// MaxPage is the most documents a page of a board holds.
const MaxPage = rank.MaxPage

// ErrPage refuses a page out of shape: an offset below 0, or a limit
// outside 1 to MaxPage.
var ErrPage = rank.ErrPage

// Page is the documents at consecutive places of a board, exact at AsOf,
// of Of documents; Reads is what it cost in Firestore reads (see
// docs/rank.md).
type Page struct {
	Documents []Ranked
	Of        int64
	AsOf      time.Time
	Reads     int
}

// Ranked is one document of a Page: its path, its place (1 + the
// documents whose value was greater; ties share one), and its value as
// stored, an int64 or a float64.
type Ranked struct {
	Document string
	Rank     int64
	Value    any
}

// Board is a page of collection's documents by field, declared
// rank(field) in TALLY_COUNTS: those at places offset+1 to offset+limit
// (limit from 1 to MaxPage), in order, ties in the order of their ids
// from the last, exact at the page's AsOf. It reads the board's summary,
// then the page's documents and those of the range of values it starts
// in above it, one read each, never a document skipped unread; a page
// past the end is empty.
func (c *Client) Board(ctx context.Context, collection, field string, offset, limit int) (Page, error) {
	b, err := c.layout.Board(collection, field)
	if err != nil {
		return Page{}, err
	}
	ctx, cancel := c.bound(ctx, 3)
	defer cancel()
	p, err := rank.ReadPage(ctx, c.fs, b, offset, limit)
	out := Page{Documents: make([]Ranked, len(p.Entries)), Of: p.Of, AsOf: p.AsOf, Reads: p.Reads}
	for i, e := range p.Entries {
		out.Documents[i] = Ranked{Document: e.Doc, Rank: e.Rank, Value: e.Value}
	}
	return out, err
}
