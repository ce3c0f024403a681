package listen

import (
	"context"
	"sync/atomic"
	"time"

	"cloud.google.com/go/firestore"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// stallCheck is how long a document's listen stream may answer nothing
// before the watchdog reads the document (one read each stallCheck of
// silence). The emulator, under load, was seen to leave a stream open and
// silent for minutes while its document changed; a stream that has
// answered nothing for two checks, the document having changed since its
// last snapshot at the first, has stalled.
var stallCheck atomic.Int64

func init() { stallCheck.Store(int64(time.Minute)) }

// stalls counts the streams found stalled, for the tests.
var stalls atomic.Int64

// errStalled ends a stream the watchdog found stalled: as a cancelled
// one, it is opened again.
var errStalled = status.Error(codes.Canceled, "listen: the stream stalled while its document changed")

// A watchdog follows one listen stream of ref. At each stallCheck that
// the stream answered nothing, it reads ref: when ref differs from the
// last snapshot yielded (seen), or the stream never answered, and the
// stream still answers nothing at the next check, it marks the stream
// stalled and ends it (cancel).
type watchdog struct {
	ref     *firestore.DocumentRef
	seen    func() *firestore.DocumentSnapshot
	cancel  context.CancelFunc
	heard   chan struct{}
	stalled atomic.Bool
}

func newWatchdog(ref *firestore.DocumentRef, seen func() *firestore.DocumentSnapshot, cancel context.CancelFunc) *watchdog {
	return &watchdog{ref: ref, seen: seen, cancel: cancel, heard: make(chan struct{}, 1)}
}

// answered tells the watchdog the stream answered.
func (d *watchdog) answered() {
	select {
	case d.heard <- struct{}{}:
	default:
	}
}

func (d *watchdog) run(ctx context.Context) {
	every := time.Duration(stallCheck.Load())
	t := time.NewTicker(every)
	defer t.Stop()
	heard, behind := false, false
	for {
		select {
		case <-ctx.Done():
			return
		case <-d.heard:
			heard, behind = true, false
			t.Reset(every)
		case <-t.C:
			if behind {
				d.stalled.Store(true)
				stalls.Add(1)
				d.cancel()
				return
			}
			behind = !heard || d.changed(ctx)
		}
	}
}

// changed reports whether ref, read now, differs from the last snapshot
// yielded; false when the read fails (the next check reads again).
func (d *watchdog) changed(ctx context.Context) bool {
	snap, err := d.ref.Get(ctx)
	if err != nil && status.Code(err) != codes.NotFound {
		return false
	}
	prev := d.seen()
	return prev == nil || !same(prev, snap)
}
