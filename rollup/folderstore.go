package rollup

import (
	"context"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/internal/fold"
	"github.com/tallycounters/tally/internal/lives"
)

// folderStore is the store of a deployed Rollup: a fold.Folder, whose
// earlier lives' increments a lives.Mover moves.
type folderStore struct {
	*fold.Folder
	lives *lives.Mover
}

func newFolderStore(client *firestore.Client, folder *fold.Folder) folderStore {
	return folderStore{Folder: folder, lives: lives.New(client, folder.Layout(), folder)}
}

func (s folderStore) MoveStrays(ctx context.Context, id, from string, after time.Time) (map[string]int64, error) {
	return s.lives.Move(ctx, id, from, after)
}
