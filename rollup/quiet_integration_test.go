package rollup

import (
	"context"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/firestore"
	"github.com/cloudevents/sdk-go/v2/event"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/testkit/layouttest"
)

// instances are Rollup handlers of one counter, each with its own client,
// recording which folds each made. Followers would read the parent only
// every ConfirmEvery (an hour here) if they waited for a leader, and
// Handle gives up after Hold (10 s): an event that waits for a leader that
// will not fold fails the test.
type instances struct {
	h        *history
	handlers []*Handler
	mu       sync.Mutex
	folds    [][]FoldInfo // by handler
}

func newInstances(h *history, n int, window time.Duration) *instances {
	in := &instances{h: h, folds: make([][]FoldInfo, n)}
	for i := range n {
		in.handlers = append(in.handlers, New(emulatortest.Client(h.t), Config{
			Layout: layouttest.Public(h.layout), Project: emulatortest.Project, Spacing: window, ConfirmEvery: time.Hour, Hold: 10 * time.Second,
			OnFold: func(f FoldInfo) {
				h.folds.add(f)
				in.mu.Lock()
				in.folds[i] = append(in.folds[i], f)
				in.mu.Unlock()
			},
		}))
	}
	return in
}

// deliver hands e to handler i and says whether that handler's own fold
// covered it.
func (in *instances) deliver(i int, e event.Event) (foldedHere bool) {
	in.h.t.Helper()
	in.mu.Lock()
	before := len(in.folds[i])
	in.mu.Unlock()
	if err := in.handlers[i].Handle(context.Background(), e); err != nil {
		in.h.t.Fatalf("instance %d: Handle: %v", i, err)
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	for _, f := range in.folds[i][before:] {
		if f.Wrote && f.Covered > 0 {
			return true
		}
	}
	return false
}

// TestQuietCounterFoldedByWhicheverHolds: a counter incremented once in a
// while, on 8 instances that have all read its parent since instance 7 last
// wrote it, so that 7 leads. Each later event goes to another instance:
// each is folded at once by the instance that holds it, none waits for the
// leader, which holds nothing.
func TestQuietCounterFoldedByWhicheverHolds(t *testing.T) {
	t.Parallel()
	h := newHistory(t)
	in := newInstances(h, 8, testWindow)
	var last event.Event
	for i := range in.handlers {
		time.Sleep(2 * testWindow)
		last = h.incr(i%4, 1)
		in.deliver(i, last)
	}
	for i := range in.handlers {
		in.deliver(i, last) // each reads the parent as instance 7 left it
	}
	for i := range 7 {
		time.Sleep(2 * testWindow) // the parent's last write is a window old
		if !in.deliver(i, h.incr(i%4, 1)) {
			t.Errorf("instance %d's event was not folded by instance %d", i, i)
		}
	}
	h.checkExact()
	checkSpaced(t, h.folds.writes(), testWindow)
}

// TestFollowerFoldsForAnIdleLeader: one instance folds; within its window
// the next increment's event goes to another instance, and the first holds
// nothing more, so it will not fold again. The second folds once the
// window allows.
func TestFollowerFoldsForAnIdleLeader(t *testing.T) {
	t.Parallel()
	const window = 300 * time.Millisecond
	h := newHistory(t)
	in := newInstances(h, 2, window)
	first := h.incr(0, 1)
	in.deliver(1, first) // instance 1 folds, and knows the parent
	in.deliver(0, first) // instance 0 reads the parent: a duplicate, covered
	if !in.deliver(0, h.incr(1, 1)) {
		t.Error("instance 0 left its event to instance 1, which held none")
	}
	h.checkExact()
	checkSpaced(t, h.folds.writes(), window)
}

// TestFoldSumsInOneCall: on a client built as tally builds its own, a fold
// sums the shards with one aggregation query and no transaction; on a
// plain client, which reports no read time, it sums in a read-only
// transaction, and is as exact.
func TestFoldSumsInOneCall(t *testing.T) {
	t.Parallel()
	fsClient, ops := emulatortest.CountingClient(t)
	plain, err := firestore.NewClient(context.Background(), emulatortest.Project)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	for _, tc := range []struct {
		name   string
		client *firestore.Client
	}{{"tally's client", fsClient}, {"a plain client", plain}} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHistory(t)
			handler := New(tc.client, Config{Layout: layouttest.Public(core.Default()), Project: emulatortest.Project, Spacing: testWindow})
			ops.Reset()
			for i := range 5 {
				time.Sleep(2 * testWindow)
				h.deliver(handler, h.incr(i%3, 1))
			}
			h.checkExact()
			if tc.client == fsClient && ops.Transactions() != 0 {
				t.Errorf("5 folds began %d transactions; want none", ops.Transactions())
			}
		})
	}
}
