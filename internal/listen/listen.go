// Package listen follows a Firestore document with a realtime listener
// that outlives the stream it runs on. The Firestore client opens a
// listen stream again after most failures, but not after the server
// cancels it, which the emulator does now and then under load; a listener
// that a user holds for as long as a page is open must go on regardless.
package listen

import (
	"context"
	"errors"
	"iter"
	"time"

	"cloud.google.com/go/firestore"
	"github.com/googleapis/gax-go/v2"
	"google.golang.org/api/iterator"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Snapshots yields each snapshot of ref, as ref.Snapshots does: the
// current one first, then one for each change. It ends without an error
// when ctx ends, and with the error when the listener fails for good. A
// stream the server cancels is opened again after a backoff; the snapshot
// it opens with is yielded only if the document changed in between, so
// the caller sees the gap as one change at most.
func Snapshots(ctx context.Context, ref *firestore.DocumentRef) iter.Seq2[*firestore.DocumentSnapshot, error] {
	return func(yield func(*firestore.DocumentSnapshot, error) bool) {
		var last *firestore.DocumentSnapshot
		backoff := newBackoff()
		for {
			err := follow(ctx, ref, func(snap *firestore.DocumentSnapshot) bool {
				backoff = newBackoff() // the stream answered: a later cancel starts over
				if last != nil && same(last, snap) {
					return true
				}
				last = snap
				return yield(snap, nil)
			})
			switch {
			case err == nil || ctx.Err() != nil:
				return
			case status.Code(err) != codes.Canceled:
				yield(nil, err)
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff.Pause()):
			}
		}
	}
}

// newBackoff is the wait before each reopening of a cancelled stream.
func newBackoff() gax.Backoff {
	return gax.Backoff{Initial: 100 * time.Millisecond, Max: 5 * time.Second, Multiplier: 2}
}

// follow runs one listen stream on ref, handing each snapshot to each
// until it returns false (follow then returns nil) or the stream ends.
func follow(ctx context.Context, ref *firestore.DocumentRef, each func(*firestore.DocumentSnapshot) bool) error {
	it := ref.Snapshots(ctx)
	defer it.Stop()
	for {
		snap, err := it.Next()
		if errors.Is(err, iterator.Done) {
			return nil
		}
		if err != nil {
			return err
		}
		if !each(snap) {
			return nil
		}
	}
}

// same reports whether a and b are one version of the document.
func same(a, b *firestore.DocumentSnapshot) bool {
	return a.Exists() == b.Exists() && a.UpdateTime.Equal(b.UpdateTime)
}
