package rank

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math"
	"math/big"
	"slices"
	"time"

	"cloud.google.com/go/firestore"
)

// MaxPage is the most documents a page of a board holds.
const MaxPage = 100

// ErrPage refuses a page out of shape.
var ErrPage = fmt.Errorf("rank: a page is 1 to %d documents, at an offset of 0 or more", MaxPage)

// Entry is one document of a page: its place, and its value as stored
// (an int64 or a float64).
type Entry struct {
	Doc   string
	Rank  int64
	Value any
}

// Page is the documents at places Offset+1 to Offset+len(Entries) of a
// board, exact at AsOf, of Of documents: each ranked 1 + the documents
// whose value was greater (ties share a place, and come in the order of
// their ids, from the last: Firestore's own for a descending query).
// Reads is what it cost, in Firestore's billed reads.
type Page struct {
	Entries []Entry
	Of      int64
	AsOf    time.Time
	Reads   int
}

// ReadPage reads the page of b of at most limit documents after the
// first offset: the summary (one read; an idle board's is folded first,
// as Read does), then, at its read time, the documents from the top of
// the cell the page starts in (or of that cell's part, in a crowded
// cell) down to the page's last, one read each: the page's own, and those
// of its cell or part above it, fewer than the cell or part holds. It
// never skips documents with a query's offset, which Firestore bills as
// reads all the same. A page past the end is empty, with Of.
func ReadPage(ctx context.Context, c *firestore.Client, b Board, offset, limit int) (Page, error) {
	if offset < 0 || limit < 1 || limit > MaxPage {
		return Page{}, ErrPage
	}
	s, reads, err := currentSummary(ctx, c, b, time.Time{})
	if err != nil {
		return Page{Reads: reads}, err
	}
	p := Page{Of: s.Of, AsOf: s.AsOf, Reads: reads, Entries: []Entry{}}
	if s.Updated.IsZero() || int64(offset) >= s.Of {
		if s.Updated.IsZero() {
			p.AsOf = s.Read
		}
		return p, nil
	}
	from := s.pageStart(b, int64(offset))
	err = c.RunTransaction(ctx, func(ctx context.Context, tx *firestore.Transaction) error {
		p.Entries, p.Reads = []Entry{}, reads
		return p.read(ctx, c, tx, b, from, limit, s.Cells[nanCell] > 0)
	}, firestore.ReadOnly, firestore.TransactionReadTime(s.AsOf))
	return p, err
}

// start is where a page's read starts: below the value top (or at it,
// where in), in cell, with above documents over it, and the first skip
// documents it reads above the page.
type start struct {
	cell  int64
	top   float64
	in    bool
	above int64
	skip  int
}

// pageStart is where the read of a page after the first offset of the
// board's documents starts: the top of the cell they end in, or of that
// cell's part, in a crowded cell.
func (s Summary) pageStart(b Board, offset int64) start {
	cells := slices.SortedFunc(maps.Keys(s.Cells), func(x, y int64) int { return cmp.Compare(y, x) })
	var above int64
	for _, c := range cells {
		if n := s.Cells[c]; offset >= above+n {
			above += n
			continue
		}
		_, hi, _, hiIn := b.Grid.Bounds(c)
		st := start{cell: c, top: hi, in: hiIn, above: above}
		within := offset - above
		cr := s.Crowds[c]
		for i := len(cr.Above) - 1; i >= 0; i-- {
			if cr.Above[i] <= within {
				st.top, st.in, st.above, within = cr.Bounds[i], false, above+cr.Above[i], within-cr.Above[i]
				break
			}
		}
		st.skip = int(within)
		return st
	}
	return start{cell: nanCell, above: above}
}

// read reads, in tx, the page of at most limit documents from st: the
// numbers from st down, then, where they run out and the board holds
// NaN (nan), the documents of NaN, which Firestore's filters of numbers
// leave out.
func (p *Page) read(ctx context.Context, c *firestore.Client, tx *firestore.Transaction, b Board, st start, limit int, nan bool) error {
	want := st.skip + limit
	coll := c.Collection(b.Collection)
	var snaps []*firestore.DocumentSnapshot
	if st.cell != nanCell {
		op := "<"
		if st.in {
			op = "<="
		}
		q := coll.Where(b.Field, op, st.top).OrderBy(b.Field, firestore.Desc).Limit(want)
		docs, err := tx.Documents(q).GetAll()
		if err != nil {
			return fmt.Errorf("rank: read a page of %s: %w", b, err)
		}
		p.Reads += max(len(docs), 1)
		snaps = docs
	}
	if len(snaps) < want && nan {
		q := coll.Where(b.Field, "==", math.NaN()).OrderBy(firestore.DocumentID, firestore.Desc).Limit(want - len(snaps))
		docs, err := tx.Documents(q).GetAll()
		if err != nil {
			return fmt.Errorf("rank: read the NaN of a page of %s: %w", b, err)
		}
		p.Reads += max(len(docs), 1)
		snaps = append(snaps, docs...)
	}
	var prev any
	var rank int64
	for i, snap := range snaps {
		v := snap.Data()[b.Field]
		if i == 0 || !sameValue(v, prev) {
			rank = 1 + st.above + int64(i)
		}
		if i >= st.skip {
			p.Entries = append(p.Entries, Entry{Doc: b.Collection + "/" + snap.Ref.ID, Rank: rank, Value: v})
		}
		prev = v
	}
	return nil
}

// sameValue reports whether two stored numbers are one value, as
// Firestore compares them: an integer and a double exactly, NaN the same
// as NaN (its documents share the last place).
func sameValue(x, y any) bool {
	a, aok := exactValue(x)
	b, bok := exactValue(y)
	switch {
	case !aok || !bok:
		return false
	case a == nil || b == nil: // NaN
		return a == nil && b == nil
	}
	return a.Cmp(b) == 0
}

// exactValue is a stored number exactly: nil for NaN; ok false for what
// is no number.
func exactValue(v any) (*big.Float, bool) {
	switch x := v.(type) {
	case int64:
		return new(big.Float).SetInt64(x), true
	case float64:
		if math.IsNaN(x) {
			return nil, true
		}
		return big.NewFloat(x), true
	}
	return nil, false
}
