package rank

import (
	"slices"

	"cloud.google.com/go/firestore"
)

// Plan is what a write of the ranked document doc adds for its boards:
// the moves to create in the same commit, and the updates of its
// bookkeeping that record its new cells. recorded is the bookkeeping's
// record as read ({field: cell}), values the ranked fields' values as
// read, updates the write's own updates, key the write's part of the
// moves' ids (Key). A board whose field the write leaves alone moves
// nothing, unless the document holds a value that no cell records yet (a
// value the app gave it, or one it had before the rank was declared):
// the write puts it on the board.
func Plan(boards []Board, doc string, recorded, values map[string]any, updates []firestore.Update, key string) ([]*Move, []firestore.Update) {
	var moves []*Move
	var record []firestore.Update
	for _, b := range boards {
		i := slices.IndexFunc(updates, func(u firestore.Update) bool {
			return slices.Equal(u.FieldPath, firestore.FieldPath{b.Field}) || u.Path == b.Field
		})
		v := values[b.Field]
		if i >= 0 {
			v = updates[i].Value
		} else if _, known := recorded[b.Field]; known {
			continue // left alone, and on the board already
		}
		if m := Moved(b, doc, recorded[b.Field], v, key); m != nil {
			moves = append(moves, m)
			record = append(record, firestore.Update{FieldPath: b.Recorded, Value: m.Recorded()})
		}
	}
	return moves, record
}

// Known reports whether recorded ({field: cell}, a document's record)
// holds a cell for each board: a fold that knows it needs no read of the
// document to tell what its write moves.
func Known(boards []Board, recorded map[string]any) bool {
	for _, b := range boards {
		if _, ok := recorded[b.Field].(int64); !ok {
			return false
		}
	}
	return true
}
