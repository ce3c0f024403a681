package core

import (
	"fmt"

	"github.com/tallycounters/tally/internal/core/rank"
)

// Boards are the rankings the counted document name is on: none in the
// guide layout.
func (l Layout) Boards(name string) []rank.Board {
	d, err := l.match(name)
	if !l.OnDocs() || err != nil {
		return nil
	}
	return d.ranked().Boards(FieldBookkeeping)
}

// AllBoards are every ranking declared.
func (l Layout) AllBoards() []rank.Board {
	var all []rank.Board
	for _, d := range l.Docs {
		all = append(all, d.ranked().Boards(FieldBookkeeping)...)
	}
	return all
}

// Board is the ranking of the documents of collection by field, as
// declared.
func (l Layout) Board(collection, field string) (rank.Board, error) {
	b, err := rank.Find(l.AllBoards(), collection, field)
	if err != nil {
		return b, fmt.Errorf("%w: %v", ErrUndeclared, err)
	}
	return b, nil
}
