package counter

import (
	"context"
	"errors"
	"fmt"
	"path"
	"time"

	"github.com/tallycounters/tally/internal/core/rank"
)

// ErrNotRanked means the document was not on the board when its summary
// was folded: it did not exist, or had no value of the field yet (a
// document is ranked from its first fold).
var ErrNotRanked = rank.ErrNotRanked

// Place is a document's place among its collection's documents by a
// field tally keeps, exact at AsOf: Rank is 1 + the number of documents
// whose value was greater then (ties share a place), of Of documents.
// Reads is what it cost in Firestore reads: 2, or 3 when the document
// shares its range of values with others (see docs/rank.md).
type Place struct {
	Rank  int64     `json:"rank"`
	Of    int64     `json:"of"`
	AsOf  time.Time `json:"as_of"`
	Value float64   `json:"value"`
	// Int is the value as stored, where it is an integer: exact past
	// 2^53, where Value no longer tells neighbouring integers apart.
	Int   *int64 `json:"-"`
	Reads int    `json:"reads"`
}

// Top is the share of the board at or above the place, in percent: 3 for
// the 3rd of 100.
func (p Place) Top() float64 { return rank.Place{Rank: p.Rank, Of: p.Of}.Top() }

// Rank is the place of the document doc (posts/p1) among its collection's
// documents by field, declared rank(field) in TALLY_COUNTS, exact at the
// place's AsOf: two or three reads, however many documents the board holds
// (see docs/rank.md).
func (c *Client) Rank(ctx context.Context, doc, field string) (Place, error) {
	return c.RankAfter(ctx, doc, field, time.Time{})
}

// RankAfter is Rank at a read time after after: a board's summary as of
// before it is folded first (a read and a write, after the summary's
// spacing of a second), so that the place counts every fold of the
// documents written by then.
func (c *Client) RankAfter(ctx context.Context, doc, field string, after time.Time) (Place, error) {
	b, err := c.board(doc, field)
	if err != nil {
		return Place{}, err
	}
	ctx, cancel := c.bound(ctx, 3)
	defer cancel()
	p, err := rank.ReadAfter(ctx, c.fs, b, doc, after)
	return Place{Rank: p.Rank, Of: p.Of, AsOf: p.AsOf, Value: p.Value, Int: p.Int, Reads: p.Reads}, err
}

// BoardSize is how many documents of collection are ranked by field, and
// as of when: one read.
func (c *Client) BoardSize(ctx context.Context, collection, field string) (int64, time.Time, error) {
	b, err := c.layout.Board(collection, field)
	if err != nil {
		return 0, time.Time{}, err
	}
	ctx, cancel := c.bound(ctx, 2)
	defer cancel()
	s, err := rank.ReadSummary(ctx, c.fs, b)
	return s.Of, s.AsOf, err
}

// Standing is where a value stands among a collection's documents by a
// field, from the board's summary alone, exact at AsOf: a document of
// that value would be ranked Best, or, where its range of values holds
// others, anywhere from Best to Worst (see docs/rank.md). Top is the
// percentile: "top 3%" for a Worst of 3 of 100.
type Standing struct {
	Value float64   `json:"value"`
	Best  int64     `json:"rank"`
	Worst int64     `json:"rank_at_most"`
	Of    int64     `json:"of"`
	AsOf  time.Time `json:"as_of"`
	Reads int       `json:"reads"`
}

// Exact reports whether the standing is one place, Best.
func (s Standing) Exact() bool { return s.Best == s.Worst }

// Top is the share of the board at or above the value's worst place, in
// percent.
func (s Standing) Top() float64 { return rank.Place{Rank: s.Worst, Of: s.Of}.Top() }

// Standing is where value stands among collection's documents by field,
// declared rank(field) in TALLY_COUNTS: one read, of the board's summary,
// at any size of the collection. It answers "is this in the top 3%" for a
// value the caller has, such as a document's count it shows.
func (c *Client) Standing(ctx context.Context, collection, field string, value float64) (Standing, error) {
	b, err := c.layout.Board(collection, field)
	if err != nil {
		return Standing{}, err
	}
	ctx, cancel := c.bound(ctx, 2)
	defer cancel()
	s, err := rank.StandingAt(ctx, c.fs, b, value)
	return Standing{Value: s.Value, Best: s.Best, Worst: s.Worst, Of: s.Of, AsOf: s.AsOf, Reads: 1}, err
}

// board is the board of doc's collection by field.
func (c *Client) board(doc, field string) (rank.Board, error) {
	if err := c.layout.CheckName(doc); err != nil {
		return rank.Board{}, err
	}
	b, err := c.layout.Board(path.Dir(doc), field)
	if err != nil {
		return rank.Board{}, fmt.Errorf("counter: rank %s by %s: %w", doc, field, err)
	}
	return b, nil
}

// SettleRanks folds the summary of every board declared until it holds
// every move made before now: what Rollup does after each fold that moves
// a document between ranges, for a caller that wrote with this client
// (Reset, Reconcile) or wants a rank as of now.
func (c *Client) SettleRanks(ctx context.Context) error {
	return c.settleNow(ctx, c.layout.AllBoards())
}

// settleNow settles boards up to the server's time now.
func (c *Client) settleNow(ctx context.Context, boards []rank.Board) error {
	var errs []error
	for _, b := range boards {
		if _, err := rank.SettleNow(ctx, c.fs, b); err != nil {
			errs = append(errs, fmt.Errorf("counter: settle %s: %w", b, err))
		}
	}
	return errors.Join(errs...)
}

// DeleteDocument deletes the app's document doc and takes it off every
// board it is on, in one commit, so that no rank at any read time counts
// it once it is gone, and settles those boards. A document the app deletes
// itself leaves its boards only when Rollup is told of its deletion:
// ranks read in between count it still. A document already gone is no
// error.
func (c *Client) DeleteDocument(ctx context.Context, doc string) error {
	if err := c.layout.CheckName(doc); err != nil {
		return err
	}
	ctx, cancel := c.boundFold(ctx)
	defer cancel()
	moves, err := rank.Delete(ctx, c.fs, c.layout.Boards(doc), doc, c.layout.LifeOf)
	if err != nil {
		return fmt.Errorf("counter: %w", err)
	}
	for _, m := range moves {
		if _, err := rank.Settle(ctx, c.fs, m.Board, m.At); err != nil {
			return fmt.Errorf("counter: settle %s: %w", m.Board, err)
		}
	}
	return nil
}
