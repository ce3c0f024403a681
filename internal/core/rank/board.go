package rank

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
	"time"

	"cloud.google.com/go/firestore"
)

// Firestore names of a board's documents and fields.
const (
	Collection      = "tally_ranks" // a board's summary: tally_ranks/{board}
	MovesCollection = "moves"       // its moves: tally_ranks/{board}/moves/{id}
	FieldRank       = "rank"        // in a ranked document's bookkeeping: {field: cell}
	fieldCells      = "cells"
	fieldCrowds     = "crowds"
	fieldOf         = "of"
	fieldAsOf       = "as_of"
	fieldWritten    = "written"
	fieldFrom       = "from"
	fieldTo         = "to"
	fieldDoc        = "doc"
	fieldAt         = "at"
)

// Board is one ranking: the documents of Collection (a collection's path)
// by their Field, cut into cells by Grid.
type Board struct {
	Collection string
	Field      string
	Grid       Grid
	// Integers: the field holds integers only (a count, or a count or sum
	// of integers), so a cell of one integer needs no count() inside it.
	Integers bool
	// Recorded is where a ranked document's bookkeeping records the cell
	// it is counted in.
	Recorded firestore.FieldPath
}

// NewBoard is the board of collection by field, whose documents record
// their cells in the map at bookkeeping; trend is whether the field is a
// trend's, integers whether it holds integers only.
func NewBoard(collection, field string, bookkeeping firestore.FieldPath, trend, integers bool) Board {
	b := Board{Collection: collection, Field: field, Integers: integers && !trend,
		Recorded: append(slices.Clone(bookkeeping), FieldRank, field)}
	if trend {
		b.Grid.Step = trendStep
	}
	return b
}

// ID is the board's document id: its collection's path with ':' for '/',
// then ':' and the field.
func (b Board) ID() string { return strings.ReplaceAll(b.Collection, "/", ":") + ":" + b.Field }

// String names the board as rank(field) of a collection.
func (b Board) String() string { return b.Collection + ":rank(" + b.Field + ")" }

// Summary is the board's summary document.
func (b Board) Summary(c *firestore.Client) *firestore.DocumentRef {
	return c.Collection(Collection).Doc(b.ID())
}

// Moves is the collection of the board's moves not folded yet.
func (b Board) Moves(c *firestore.Client) *firestore.CollectionRef {
	return b.Summary(c).Collection(MovesCollection)
}

// Move is a document's change of cell: From and To are nil for none (its
// first value, its deletion).
type Move struct {
	Board    Board
	Doc      string
	From, To *int64
	ID       string
	At       time.Time // its commit time, once known
}

// Moved is the move of the document doc on b from the cell its
// bookkeeping records (recorded, absent if it is not ranked) to the one
// its value v falls in (ok false: it holds no value b ranks); nil if none.
// key makes the move's id, one per write of the document (its life and
// the fold's read time).
func Moved(b Board, doc string, recorded any, v any, key string) *Move {
	m := Move{Board: b, Doc: doc, ID: moveID(doc, key)}
	if c, ok := recorded.(int64); ok {
		m.From = &c
	}
	if c, ok := b.Grid.CellOf(v); ok {
		m.To = &c
	}
	if m.From == nil && m.To == nil || m.From != nil && m.To != nil && *m.From == *m.To {
		return nil
	}
	return &m
}

func moveID(doc, key string) string {
	h := sha256.Sum256([]byte(doc + "\x00" + key))
	return hex.EncodeToString(h[:16])
}

// Ref is the move's document.
func (m *Move) Ref(c *firestore.Client) *firestore.DocumentRef { return m.Board.Moves(c).Doc(m.ID) }

// Data is what the move's document holds: the cells, the document's path,
// and its commit time.
func (m *Move) Data() map[string]any {
	d := map[string]any{fieldDoc: m.Doc, fieldAt: firestore.ServerTimestamp}
	if m.From != nil {
		d[fieldFrom] = *m.From
	}
	if m.To != nil {
		d[fieldTo] = *m.To
	}
	return d
}

// Recorded is the bookkeeping's value after the move: the cell the
// document is counted in, or a delete of it.
func (m *Move) Recorded() any {
	if m.To == nil {
		return firestore.Delete
	}
	return *m.To
}

// Key is a fold's part of a move's id: the document's life and the read
// time it folds at.
func Key(life string, at time.Time) string { return life + "@" + at.UTC().Format(time.RFC3339Nano) }
