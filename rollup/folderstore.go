package rollup

import (
	"context"
	"fmt"
	"time"

	"cloud.google.com/go/firestore"
	"cloud.google.com/go/firestore/apiv1/firestorepb"

	"github.com/tallycounters/tally/internal/adder"
	"github.com/tallycounters/tally/internal/fold"
	"github.com/tallycounters/tally/internal/lives"
)

// folderStore is the store of a deployed Rollup: a fold.Folder, whose
// earlier lives' increments a lives.Mover moves, and whose shards' writes
// it sums.
type folderStore struct {
	*fold.Folder
	client *firestore.Client
	lives  *lives.Mover
}

func newFolderStore(client *firestore.Client, folder *fold.Folder) folderStore {
	return folderStore{Folder: folder, client: client, lives: lives.New(client, folder.Layout(), folder)}
}

func (s folderStore) SumWrites(ctx context.Context, id, life string, at time.Time) (int64, error) {
	q := s.Layout().Shards(s.client, id, life).NewAggregationQuery().WithSumPath(adder.WritesPath(s.Layout()), "w")
	var res firestore.AggregationResult
	err := s.client.RunTransaction(ctx, func(ctx context.Context, tx *firestore.Transaction) (err error) {
		res, err = q.Transaction(tx).Get(ctx)
		return err
	}, firestore.ReadOnly, firestore.TransactionReadTime(at))
	if err != nil {
		return 0, fmt.Errorf("rollup: sum the writes of %s at %s: %w", id, at.Format(time.RFC3339Nano), err)
	}
	v, _ := res["w"].(*firestorepb.Value)
	return v.GetIntegerValue(), nil
}

func (s folderStore) MoveStrays(ctx context.Context, id, from string, after time.Time) (map[string]int64, error) {
	return s.lives.Move(ctx, id, from, after)
}
