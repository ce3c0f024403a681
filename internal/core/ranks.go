package core

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/tallycounters/tally/internal/core/rank"
)

// rankDecl is a declaration of rank in TALLY_COUNTS: rank(field).
var rankDecl = regexp.MustCompile(`^rank\(\s*([^()\s]*)\s*\)$`)

// ranked is what d declares, as package rank reads it.
func (d Declaration) ranked() rank.Declared {
	return rank.Declared{Collection: d.Collection, Counts: d.Fields, Aggregates: d.Aggregates, Windows: d.Windows, Ranks: d.Ranks}
}

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

// validRanks checks the fields d ranks by (rank.Declared.Check).
func validRanks(d Declaration) error {
	if err := d.ranked().Check(d.One() || strings.Contains(d.Collection, "*")); err != nil {
		return fmt.Errorf("core: counts on %q: %w", d.Collection, err)
	}
	return nil
}
