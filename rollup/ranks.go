package rollup

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"cloud.google.com/go/firestore"
	"github.com/googleapis/google-cloudevents-go/cloud/firestoredata"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/core/rank"
)

// boards are the rankings this instance's folds moved documents on and
// whose summaries it has yet to bring up to those moves (package rank):
// a handler settles them before it answers, so that a rank read soon
// after sees the move.
type boards struct {
	client *firestore.Client
	mu     sync.Mutex
	moved  map[string]movedBoard    // by board id
	known  map[string]*settledBoard // by board id
}

// settledBoard is how far this instance knows a board's summary to be
// folded; its lock makes the instance's handlers settle it one at a
// time, so that one folds and the rest find its fold, with no read.
type settledBoard struct {
	mu   sync.Mutex
	asOf time.Time
}

type movedBoard struct {
	board rank.Board
	at    time.Time // the latest commit of a move on it
}

// note notes the moves of a fold committed at at.
func (b *boards) note(moves []*rank.Move, at time.Time) {
	for _, m := range moves {
		b.noteBoard(m.Board, at)
	}
}

// noteBoard notes a move on board committed at at.
func (b *boards) noteBoard(board rank.Board, at time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.moved == nil {
		b.moved = map[string]movedBoard{}
	}
	if old, ok := b.moved[board.ID()]; !ok || old.at.Before(at) {
		b.moved[board.ID()] = movedBoard{board: board, at: at}
	}
}

// settle folds the summary of every board moved on until it holds the
// moves noted. A board it could not settle is noted again, for the next
// handler; its moves wait in the board meanwhile, and no rank misses
// them: a summary is exact as of its as_of.
func (b *boards) settle(ctx context.Context) error {
	b.mu.Lock()
	moved := b.moved
	b.moved = nil
	b.mu.Unlock()
	var errs []error
	for _, m := range moved {
		if err := b.settleOne(ctx, m); err != nil {
			b.noteBoard(m.board, m.at)
			errs = append(errs, fmt.Errorf("rollup: settle %s: %w", m.board, err))
		}
	}
	return errors.Join(errs...)
}

// settleOne settles m's board up to its moves, unless this instance knows
// it is already.
func (b *boards) settleOne(ctx context.Context, m movedBoard) error {
	b.mu.Lock()
	if b.known == nil {
		b.known = map[string]*settledBoard{}
	}
	k, ok := b.known[m.board.ID()]
	if !ok {
		k = &settledBoard{}
		b.known[m.board.ID()] = k
	}
	b.mu.Unlock()
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.asOf.Before(m.at) {
		return nil
	}
	s, err := rank.Settle(ctx, b.client, m.board, m.at)
	if err == nil {
		k.asOf = s.AsOf
	}
	return err
}

// unrank takes the document path, deleted in its life, off every board
// its last state recorded it on (recorded: its bookkeeping's record), and
// settles them.
func (b *boards) unrank(ctx context.Context, l core.Layout, path, life string, recorded map[string]any) error {
	for _, board := range l.Boards(path) {
		m, err := rank.Unrank(ctx, b.client, board, path, life, recorded[board.Field])
		if err != nil {
			return fmt.Errorf("rollup: %w", err)
		}
		if m != nil {
			b.noteBoard(m.Board, m.At)
		}
	}
	return b.settle(ctx)
}

// recorded is the cells a document's bookkeeping records, by field.
func recorded(doc *firestoredata.Document) map[string]any {
	return cells(doc.GetFields()[core.FieldBookkeeping].GetMapValue().GetFields()[rank.FieldRank])
}

// cells is a record of cells ({field: cell}) as an event holds it.
func cells(record *firestoredata.Value) map[string]any {
	out := map[string]any{}
	for field, v := range record.GetMapValue().GetFields() {
		if c, ok := v.GetValueType().(*firestoredata.Value_IntegerValue); ok {
			out[field] = c.IntegerValue
		}
	}
	return out
}
