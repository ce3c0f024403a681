package rank

import (
	"context"
	"fmt"
	"time"

	"cloud.google.com/go/firestore"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tallycounters/tally/internal/fsrpc"
)

// GoneCollection holds a board's record of each life of a document taken
// off it: tally_ranks/{board}/gone/{id}.
const GoneCollection = "gone"

// Unrank takes doc, deleted in its life, off b, where its bookkeeping
// last recorded cell recorded: a move to nowhere, made with a record of
// the deletion in one commit, so that however often the deletion is told
// the move is made once. It answers the move, or nil if there was none
// to make (not ranked, or made already).
func Unrank(ctx context.Context, c *firestore.Client, b Board, doc, life string, recorded any) (*Move, error) {
	m := Moved(b, doc, recorded, nil, life+"@deleted")
	if m == nil {
		return nil, nil
	}
	at, err := Commit(ctx, c, func(tx *firestore.Transaction) error { return takeOff(tx, c, m) })
	switch {
	case status.Code(err) == codes.AlreadyExists:
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("rank: take %s off %s: %w", doc, b, err)
	}
	m.At = at
	return m, nil
}

// Delete deletes doc and takes it off boards in one commit, so that no
// read time sees it on a board and gone: a move to nowhere for each board
// it is on, and the record of its deletion that makes Rollup's, when it
// is told, none. lifeOf names the life a document created at a time is.
// It answers the moves made; a document already gone is no error.
func Delete(ctx context.Context, c *firestore.Client, boards []Board, doc string, lifeOf func(time.Time) string) ([]*Move, error) {
	var moves []*Move
	ctx, committed := fsrpc.WithCommitTime(ctx)
	err := c.RunTransaction(ctx, func(ctx context.Context, tx *firestore.Transaction) error {
		moves = nil
		snap, err := tx.Get(c.Doc(doc))
		if status.Code(err) == codes.NotFound {
			return nil
		}
		if err != nil {
			return err
		}
		for _, b := range boards {
			recorded, _ := snap.DataAtPath(b.Recorded)
			m := Moved(b, doc, recorded, nil, lifeOf(snap.CreateTime)+"@deleted")
			if m == nil {
				continue
			}
			if err := takeOff(tx, c, m); err != nil {
				return err
			}
			moves = append(moves, m)
		}
		return tx.Delete(c.Doc(doc), firestore.LastUpdateTime(snap.UpdateTime))
	})
	if err != nil {
		return nil, fmt.Errorf("rank: delete %s: %w", doc, err)
	}
	for _, m := range moves {
		m.At = committed()
	}
	return moves, nil
}

// takeOff creates in tx the move m, to nowhere, and the record of the
// deletion it is of, which no second deletion of the same life can make
// again.
func takeOff(tx *firestore.Transaction, c *firestore.Client, m *Move) error {
	gone := m.Board.Summary(c).Collection(GoneCollection).Doc(m.ID)
	if err := tx.Create(gone, map[string]any{fieldDoc: m.Doc, fieldAt: firestore.ServerTimestamp}); err != nil {
		return err
	}
	return tx.Create(m.Ref(c), m.Data())
}
