package rank

import (
	"context"
	"maps"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/internal/fsrpc"
)

// Commit commits the writes that writes makes, and only them, in one
// commit with no reads (a transaction of writes only), and answers its
// commit time. A fold commits its document's write and its moves so,
// and a summary's fold its write and the deletes of the moves it took.
// The commit time comes from the client's options (fsrpc); a client
// without them answers the zero time.
func Commit(ctx context.Context, c *firestore.Client, writes func(*firestore.Transaction) error) (time.Time, error) {
	ctx, committed := fsrpc.WithCommitTime(ctx)
	err := c.RunTransaction(ctx, func(_ context.Context, tx *firestore.Transaction) error { return writes(tx) })
	return committed(), err
}

// CommitFold commits a fold's updates of the document at ref, on the
// condition that it is as of updated, with the moves of its boards, in
// one commit, and answers the write's result.
func CommitFold(ctx context.Context, c *firestore.Client, ref *firestore.DocumentRef, updates []firestore.Update, updated time.Time, moves []*Move) (*firestore.WriteResult, error) {
	at, err := Commit(ctx, c, func(tx *firestore.Transaction) error {
		if err := tx.Update(ref, updates, firestore.LastUpdateTime(updated)); err != nil {
			return err
		}
		for _, m := range moves {
			if err := tx.Create(m.Ref(c), m.Data()); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil && at.IsZero() { // a client built without tally's options: read it
		snap, gerr := ref.Get(ctx)
		if gerr != nil {
			return nil, gerr
		}
		at = snap.UpdateTime
	}
	for _, m := range moves {
		m.At = at
	}
	return &firestore.WriteResult{UpdateTime: at}, err
}

// Record is a document's record of its cells (by field) after moves.
func Record(before map[string]any, moves []*Move) map[string]any {
	out := maps.Clone(before)
	for _, m := range moves {
		if out == nil {
			out = map[string]any{}
		}
		if m.To == nil {
			delete(out, m.Board.Field)
		} else {
			out[m.Board.Field] = *m.To
		}
	}
	return out
}
