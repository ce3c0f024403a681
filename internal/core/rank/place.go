package rank

import (
	"context"
	"errors"
	"fmt"
	"time"

	"cloud.google.com/go/firestore"
	"cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// ErrNotRanked means the document was not on the board at the summary's
// read time: it did not exist, or held no value the board ranks yet (a
// document is ranked from its first fold).
var ErrNotRanked = errors.New("rank: the document is not on the board")

// Place is a document's place on a board, exact at AsOf: Rank is 1 + the
// number of documents whose value was greater (ties share a place), of
// Of documents. Reads is what it cost, in Firestore's billed reads.
type Place struct {
	Doc   string
	Rank  int64
	Of    int64
	AsOf  time.Time
	Value float64
	// Int is the value as stored, where it is an integer: exact past
	// 2^53, where Value no longer tells neighbouring integers apart.
	Int   *int64
	Reads int
}

// Top is the share of the board at or above the place, in percent: a
// Rank of 3 of 100 is the top 3%.
func (p Place) Top() float64 {
	if p.Of == 0 {
		return 0
	}
	return 100 * float64(p.Rank) / float64(p.Of)
}

// Fresh is the oldest a summary's as_of may be for Read to read at it:
// Firestore serves reads at a past time for an hour (without
// point-in-time recovery), so a summary that no move has changed for
// longer is folded again first, which moves its as_of to now.
const Fresh = 30 * time.Minute

// Read is doc's place on b: the summary (one read), and at its read time
// the document (one read) and, if the document's cell holds more than
// one value, count() of those above it in the cell (one read per 1,000
// documents counted, at least one). On a board idle for longer than
// Fresh it folds the summary first (a read of its moves, at least one,
// and a write), once for every reader until the board is idle as long
// again.
func Read(ctx context.Context, c *firestore.Client, b Board, doc string) (Place, error) {
	return ReadAfter(ctx, c, b, doc, time.Time{})
}

// ReadAfter is Read at a read time after after: a summary as of before
// it is folded first (a read, and a write of the summary; its spacing
// waited out), as an idle board's is.
func ReadAfter(ctx context.Context, c *firestore.Client, b Board, doc string, after time.Time) (Place, error) {
	s, reads, err := currentSummary(ctx, c, b, after)
	if err != nil {
		return Place{Doc: doc, Reads: reads}, err
	}
	if s.Updated.IsZero() {
		return Place{Doc: doc, Reads: reads}, fmt.Errorf("%w: %s has no summary yet", ErrNotRanked, b)
	}
	p := Place{Doc: doc, Of: s.Of, AsOf: s.AsOf}
	err = c.RunTransaction(ctx, func(ctx context.Context, tx *firestore.Transaction) error {
		p.Reads = reads
		return p.within(ctx, c, tx, b, s)
	}, firestore.ReadOnly, firestore.TransactionReadTime(s.AsOf))
	return p, err
}

// currentSummary reads b's summary (one read) and, where it is not
// current, folds it first (refresh): an idle board's, which Firestore
// would refuse a read at, or one as of before after. It answers the
// summary, and the reads it took. One that does not exist yet is
// answered as read.
func currentSummary(ctx context.Context, c *firestore.Client, b Board, after time.Time) (Summary, int, error) {
	s, err := ReadSummary(ctx, c, b)
	if err != nil || s.Updated.IsZero() || current(s, after) {
		return s, 1, err
	}
	return refresh(ctx, c, b, s, after)
}

// refresh folds s, a summary not current (older than Fresh, or as of
// before after), so that its as_of is a time Firestore still reads at,
// and after after; or finds another reader's fold: the summary then, and
// the reads Read has made so far. A fold is as of a spacing before its
// read, so a summary read before after+Spacing is read again then.
func refresh(ctx context.Context, c *firestore.Client, b Board, s Summary, after time.Time) (Summary, int, error) {
	reads := 1
	for {
		if wait := after.Add(Spacing).Sub(s.Read); wait > 0 {
			err := sleep(ctx, wait)
			if err == nil {
				s, err = ReadSummary(ctx, c, b)
				reads++
			}
			if err != nil || current(s, after) {
				return s, reads, err
			}
		}
		next, err := Fold(ctx, c, b, s)
		reads++ // the moves, none on a board that has been idle
		switch {
		case errors.Is(err, ErrTooSoon):
			// written within the spacing, though as of long ago (a
			// summary seeded so): the next fold may write it
			err = sleep(ctx, s.Written.Add(Spacing).Sub(s.Read))
		case errors.Is(err, errStale):
			err = nil // another reader folded it since: read theirs
		default:
			return next, reads, err
		}
		if err != nil {
			return s, reads, err
		}
		if s, err = ReadSummary(ctx, c, b); err != nil || current(s, after) {
			return s, reads + 1, err
		}
		reads++
	}
}

// current reports whether a rank may be read at s's as_of: it is within
// Fresh of its read, and not before after.
func current(s Summary, after time.Time) bool {
	return s.Read.Sub(s.AsOf) <= Fresh && !s.AsOf.Before(after)
}

// within reads, in tx at the summary's read time, the document and the
// documents above it in its cell.
func (p *Place) within(ctx context.Context, c *firestore.Client, tx *firestore.Transaction, b Board, s Summary) error {
	p.Reads++
	snap, err := tx.Get(c.Doc(p.Doc))
	if status.Code(err) == codes.NotFound {
		return fmt.Errorf("%w: %s did not exist at %s", ErrNotRanked, p.Doc, s.AsOf.Format(time.RFC3339Nano))
	}
	if err != nil {
		return fmt.Errorf("rank: read %s: %w", p.Doc, err)
	}
	recorded, _ := snap.DataAtPath(b.Recorded)
	cell, ok := recorded.(int64)
	stored := snap.Data()[b.Field]
	v, isValue := Value(stored)
	if !ok || !isValue {
		return fmt.Errorf("%w: %s held no ranked %s at %s", ErrNotRanked, p.Doc, b.Field, s.AsOf.Format(time.RFC3339Nano))
	}
	p.Value, p.Rank = v, 1+s.Above(cell)
	if n, ok := stored.(int64); ok {
		p.Int = &n
	}
	if b.Grid.Single(cell, b.Integers) {
		return nil
	}
	above := cellSpan(b, cell)
	if n, top, ok := s.Crowds[cell].part(v); ok {
		p.Rank += n
		above.hi, above.hiIn = top, false
	}
	// the stored value, not v: past 2^53 a float64 no longer tells
	// neighbouring integers apart, and Firestore compares them exactly
	q := above.query(c, b).Where(b.Field, ">", stored)
	res, err := q.NewAggregationQuery().WithCount("n").Transaction(tx).Get(ctx)
	if err != nil {
		return fmt.Errorf("rank: count above %s in its cell: %w", p.Doc, err)
	}
	n, err := count(res["n"])
	if err != nil {
		return err
	}
	p.Rank += n
	p.Reads += 1 + int(max(n-1, 0))/CrowdPart
	return nil
}

// count reads a count() result.
func count(v any) (int64, error) {
	if x, ok := v.(*firestorepb.Value); ok {
		if n, ok := x.GetValueType().(*firestorepb.Value_IntegerValue); ok {
			return n.IntegerValue, nil
		}
	}
	return 0, fmt.Errorf("rank: count() answered %v", v)
}
