// Package listen follows a Firestore document with a realtime listener
// that outlives the stream it runs on. The Firestore client opens a
// listen stream again after most failures, but not after the server
// cancels it, which the emulator does now and then under load, nor after
// a stream stalls (open, and silent while its document changes), which the
// emulator was seen to do for minutes; a listener that a user holds for
// as long as a page is open must go on regardless.
package listen

import (
	"context"
	"errors"
	"iter"
	"sync"
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
// stream the server cancels, or one that stalls, is opened again after a
// backoff; the snapshot it opens with is yielded only if the document
// changed in between, so the caller sees the gap as one change at most.
func Snapshots(ctx context.Context, ref *firestore.DocumentRef) iter.Seq2[*firestore.DocumentSnapshot, error] {
	return func(yield func(*firestore.DocumentSnapshot, error) bool) {
		var (
			mu   sync.Mutex
			last *firestore.DocumentSnapshot
		)
		seen := func() *firestore.DocumentSnapshot { mu.Lock(); defer mu.Unlock(); return last }
		err := reopening(ctx, func(answered func()) error {
			sctx, cancel := context.WithCancel(ctx)
			defer cancel()
			d := newWatchdog(ref, seen, cancel)
			go d.run(sctx)
			it := ref.Snapshots(sctx)
			defer it.Stop()
			err := each(it.Next, func(snap *firestore.DocumentSnapshot) bool {
				answered()
				d.answered()
				if prev := seen(); prev != nil && same(prev, snap) {
					return true
				}
				mu.Lock()
				last = snap
				mu.Unlock()
				return yield(snap, nil)
			})
			if d.stalled.Load() {
				return errStalled
			}
			return err
		})
		if err != nil {
			yield(nil, err)
		}
	}
}

// Query yields each snapshot of q, as q.Snapshots does: the current
// results first, then one for each change, with the changes. A stream the
// server cancels is opened again after a backoff; its first snapshot,
// which lists every result as added, is yielded as it comes.
func Query(ctx context.Context, q firestore.Query) iter.Seq2[*firestore.QuerySnapshot, error] {
	return func(yield func(*firestore.QuerySnapshot, error) bool) {
		err := reopening(ctx, func(answered func()) error {
			it := q.Snapshots(ctx)
			defer it.Stop()
			return each(it.Next, func(snap *firestore.QuerySnapshot) bool {
				answered()
				return yield(snap, nil)
			})
		})
		if err != nil {
			yield(nil, err)
		}
	}
}

// reopening runs one listen stream after another: run opens one and
// follows it, calling answered on each answer, until it ends. It returns
// nil when run does (the caller is done) or ctx ends, and run's error
// when the stream failed for good; a stream the server cancelled is run
// again after a backoff, which each answer starts over.
func reopening(ctx context.Context, run func(answered func()) error) error {
	backoff := newBackoff()
	for {
		err := run(func() { backoff = newBackoff() })
		switch {
		case err == nil || ctx.Err() != nil:
			return nil
		case status.Code(err) != codes.Canceled:
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(backoff.Pause()):
		}
	}
}

// each hands what next gives to f until f returns false (each then returns
// nil) or next fails; the end of the stream is nil.
func each[T any](next func() (T, error), f func(T) bool) error {
	for {
		v, err := next()
		if errors.Is(err, iterator.Done) {
			return nil
		}
		if err != nil {
			return err
		}
		if !f(v) {
			return nil
		}
	}
}

// newBackoff is the wait before each reopening of a cancelled stream.
func newBackoff() gax.Backoff {
	return gax.Backoff{Initial: 100 * time.Millisecond, Max: 5 * time.Second, Multiplier: 2}
}

// same reports whether a and b are one version of the document.
func same(a, b *firestore.DocumentSnapshot) bool {
	return a.Exists() == b.Exists() && a.UpdateTime.Equal(b.UpdateTime)
}
