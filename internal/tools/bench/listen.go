package bench

import (
	"context"
	"fmt"
	"sync"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/internal/listen"
	"github.com/tallycounters/tally/internal/tools/opcount"
)

// sighting is one snapshot of a counter's total that a listener received.
type sighting struct {
	At    time.Time // when the listener had it, on this machine's clock
	Total int64
}

// listeners hold a realtime listener on each counter's document, as every
// page showing a counter does, and keep what each one saw.
type listeners struct {
	clients []*firestore.Client
	ops     *opcount.Ops // what the listeners were billed for: a read per snapshot
	cancel  context.CancelFunc
	wg      sync.WaitGroup

	mu   sync.Mutex
	seen [][]sighting // by counter index
	errs []error
}

// listenersPerClient is how many listeners share one connection.
const listenersPerClient = 1000

// startListeners starts a listener on the document of each of ids, reading its
// count, as a page showing the count does, and returns once each has its
// first snapshot (or within a minute).
func startListeners(ctx context.Context, host, project, coll string, ids []string) (*listeners, error) {
	lctx, cancel := context.WithCancel(context.Background())
	l := &listeners{ops: &opcount.Ops{}, cancel: cancel, seen: make([][]sighting, len(ids))}
	for range (len(ids) + listenersPerClient - 1) / listenersPerClient {
		c, err := opcount.Client(ctx, host, project, l.ops)
		if err != nil {
			l.stop()
			return nil, err
		}
		l.clients = append(l.clients, c)
	}
	var ready sync.WaitGroup
	ready.Add(len(ids))
	for i, id := range ids {
		l.wg.Add(1)
		doc, field := target(coll, id)
		go l.follow(lctx, l.clients[i/listenersPerClient].Doc(doc), i, field, ready.Done)
	}
	done := make(chan struct{})
	go func() { ready.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		l.stop()
		return nil, fmt.Errorf("bench: the listeners on %d counters had no first snapshot within a minute", len(ids))
	case <-ctx.Done():
		l.stop()
		return nil, ctx.Err()
	}
	l.ops.Reset()
	return l, nil
}

// follow records each snapshot of ref after the first, and calls ready
// once the first came.
func (l *listeners) follow(ctx context.Context, ref *firestore.DocumentRef, i int, field string, ready func()) {
	defer l.wg.Done()
	first := true
	defer func() {
		if first {
			ready() // ended before its first snapshot
		}
	}()
	for snap, err := range listen.Snapshots(ctx, ref) {
		if err != nil {
			l.mu.Lock()
			l.errs = append(l.errs, fmt.Errorf("listener on %s: %w", ref.ID, err))
			l.mu.Unlock()
			return
		}
		if first {
			first = false
			ready()
			continue
		}
		at := time.Now()
		var total int64
		if snap.Exists() {
			total, _ = snap.Data()[field].(int64)
		}
		l.mu.Lock()
		l.seen[i] = append(l.seen[i], sighting{At: at, Total: total})
		l.mu.Unlock()
	}
}

// sightings returns what the listener on counter i saw so far.
func (l *listeners) sightings(i int) []sighting {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]sighting(nil), l.seen[i]...)
}

// err is the first error a listener met, if any.
func (l *listeners) err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.errs) > 0 {
		return l.errs[0]
	}
	return nil
}

// stop ends every listener and closes their connections.
func (l *listeners) stop() {
	l.cancel()
	l.wg.Wait()
	for _, c := range l.clients {
		c.Close()
	}
}

// startFeed holds one listener on the collection of ids, as a page
// showing a feed of them does, and keeps what it sees of each counter, as
// startListeners does; it returns once the listener has its first
// snapshot (or within a minute).
func startFeed(ctx context.Context, host, project, coll string, ids []string) (*listeners, error) {
	lctx, cancel := context.WithCancel(context.Background())
	l := &listeners{ops: &opcount.Ops{}, cancel: cancel, seen: make([][]sighting, len(ids))}
	c, err := opcount.Client(ctx, host, project, l.ops)
	if err != nil {
		cancel()
		return nil, err
	}
	l.clients = append(l.clients, c)
	byDoc := map[string][]feedCount{} // document id: its counters
	for i, id := range ids {
		doc, field := target(coll, id)
		docID := doc[len(coll)+1:]
		byDoc[docID] = append(byDoc[docID], feedCount{i, field})
	}
	ready := make(chan struct{})
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		l.feed(lctx, c, coll, byDoc, ready)
	}()
	select {
	case <-ready:
	case <-time.After(time.Minute):
		l.stop()
		return nil, fmt.Errorf("bench: the listener on %s had no first snapshot within a minute", coll)
	case <-ctx.Done():
		l.stop()
		return nil, ctx.Err()
	}
	l.ops.Reset()
	return l, nil
}

// feedCount is a counter of the feed: its index, and its field on its
// document.
type feedCount struct {
	i     int
	field string
}

// feed listens to the collection coll until ctx ends, and records each
// counter's totals as the snapshots after the first show them; ready
// closes with the first snapshot, or when the listener fails.
func (l *listeners) feed(ctx context.Context, c *firestore.Client, coll string, byDoc map[string][]feedCount, ready chan struct{}) {
	first := true
	defer func() {
		if first {
			close(ready)
		}
	}()
	for snap, err := range listen.Query(ctx, c.Collection(coll).Query) {
		if err != nil {
			l.mu.Lock()
			l.errs = append(l.errs, fmt.Errorf("listener on %s: %w", coll, err))
			l.mu.Unlock()
			return
		}
		if first {
			first = false
			close(ready)
			continue
		}
		at := time.Now()
		l.mu.Lock()
		for _, ch := range snap.Changes {
			for _, k := range byDoc[ch.Doc.Ref.ID] {
				var total int64
				if ch.Kind != firestore.DocumentRemoved {
					total, _ = ch.Doc.Data()[k.field].(int64)
				}
				if s := l.seen[k.i]; len(s) == 0 || s[len(s)-1].Total != total {
					l.seen[k.i] = append(l.seen[k.i], sighting{At: at, Total: total})
				}
			}
		}
		l.mu.Unlock()
	}
}
