package fsrpc

import (
	"context"
	"errors"

	"cloud.google.com/go/firestore"
	"google.golang.org/api/iterator"
)

// EachDocument calls do with each document q finds, in order, until do
// says to stop (false) or fails.
func EachDocument(ctx context.Context, q firestore.Query, do func(*firestore.DocumentSnapshot) (bool, error)) error {
	return Each(q.Documents(ctx), do)
}

// Each is EachDocument over the documents of it, a query's in a
// transaction among others, which it stops.
func Each(it *firestore.DocumentIterator, do func(*firestore.DocumentSnapshot) (bool, error)) error {
	defer it.Stop()
	for {
		snap, err := it.Next()
		if errors.Is(err, iterator.Done) {
			return nil
		}
		if err != nil {
			return err
		}
		if more, err := do(snap); err != nil || !more {
			return err
		}
	}
}
