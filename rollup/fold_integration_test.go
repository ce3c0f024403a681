package rollup

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/googleapis/google-cloudevents-go/cloud/firestoredata"
	"google.golang.org/protobuf/proto"

	"github.com/tallycounters/tally/internal/core"
)

func slicesSortTimes(ts []time.Time) { slices.SortFunc(ts, time.Time.Compare) }

// decodeTime says when e's write happened, and whether it was a delete.
func decodeTime(t *testing.T, e event.Event) (time.Time, bool) {
	t.Helper()
	var data firestoredata.DocumentEventData
	if err := proto.Unmarshal(e.Data(), &data); err != nil {
		t.Fatal(err)
	}
	return data.GetValue().GetUpdateTime().AsTime(), data.GetValue() == nil
}

// workload writes a mixed history to three shards: creates, increments up and
// down, a reset and a delete, and returns its events in commit order.
func workload(h *history) []event.Event {
	h.set(0, 0)
	h.incr(1, 5) // created by an increment, as Increment does
	for i := 0; i < 4; i++ {
		h.incr(0, 2)
		h.incr(1, -1)
		h.incr(2, 3)
	}
	h.set(2, 0) // reset
	h.incr(2, 7)
	h.delete(1)
	h.incr(1, 4) // re-created
	return h.events
}

// checkSpaced fails if two writes of the parent are closer than the window.
func checkSpaced(t *testing.T, writes []time.Time, window time.Duration) {
	t.Helper()
	for i := 1; i < len(writes); i++ {
		if gap := writes[i].Sub(writes[i-1]); gap < window {
			t.Errorf("parent writes %d and %d are %v apart, within the %v window", i-1, i, gap, window)
		}
	}
}

// TestFoldInOrder delivers each write's event right after the write, as a
// running system does: every event waits for a fold that covers it.
func TestFoldInOrder(t *testing.T) {
	t.Parallel()
	h := newHistory(t)
	h.live = h.handler(Config{})
	workload(h)
	h.checkExact()
	checkSpaced(t, h.folds.writes(), testWindow)
}

func TestFoldEveryEventTwice(t *testing.T) {
	t.Parallel()
	h := newHistory(t)
	handler := h.handler(Config{})
	events := workload(h)
	for _, e := range events {
		h.deliver(handler, e, e)
	}
	h.deliver(handler, events...) // and the whole stream again, late
	h.checkExact()
}

func TestFoldShuffled(t *testing.T) {
	t.Parallel()
	for seed := uint64(1); seed <= 4; seed++ {
		h := newHistory(t)
		events := workload(h)
		r := rand.New(rand.NewPCG(seed, seed))
		r.Shuffle(len(events), func(i, j int) { events[i], events[j] = events[j], events[i] })
		h.deliver(h.handler(Config{}), events...)
		h.checkExact()
	}
}

// TestFoldOneMissingThenLate holds back each event of the history in turn
// while the others are delivered as their writes happen: every later event's
// fold sums the shards, so the total is exact without the missing one, which
// is answered without a write when it comes.
func TestFoldOneMissingThenLate(t *testing.T) {
	t.Parallel()
	n := len(workload(newHistory(t)))
	for k := 0; k < n; k++ {
		t.Run(fmt.Sprint("event", k), func(t *testing.T) {
			t.Parallel()
			h := newHistory(t)
			h.live = h.handler(Config{})
			h.skip = func(i int) bool { return i == k }
			events := workload(h)
			if k < n-1 {
				h.checkExact()
			}
			before := h.parent()
			h.deliver(h.live, events[k])
			h.checkExact()
			// A delete's event carries no exact time (the emulator's is cut to
			// the second), so a late one may cost one more fold.
			_, isDelete := decodeTime(t, events[k])
			if k < n-1 && !isDelete && !h.parent().UpdateTime.Equal(before.UpdateTime) {
				t.Errorf("event %d delivered late wrote the parent again", k)
			}
		})
	}
}

func TestFoldShardDeleted(t *testing.T) {
	t.Parallel()
	h := newHistory(t)
	h.incr(0, 5)
	h.incr(1, 3)
	h.delete(0)
	h.deliver(h.handler(Config{}), h.events...)
	h.checkExact()
	if got := h.parent().Data()[core.FieldTotal]; got != int64(3) {
		t.Errorf("total = %v, want 3", got)
	}

	// Deleted and re-created, delivered newest first.
	h = newHistory(t)
	h.incr(0, 5)
	h.delete(0)
	h.incr(0, 2)
	h.delete(0)
	h.incr(0, 9)
	slices.Reverse(h.events)
	h.deliver(h.handler(Config{}), h.events...)
	h.checkExact()
}

func TestFoldShardResetToZero(t *testing.T) {
	t.Parallel()
	h := newHistory(t)
	h.incr(0, 5)
	h.incr(0, 5)
	h.set(0, 0)
	h.incr(0, 1)
	h.deliver(h.handler(Config{}), h.events...)
	if got := h.parent().Data()[core.FieldTotal]; got != int64(1) {
		t.Errorf("total = %v, want 1", got)
	}
	h.checkExact()
}

// TestFoldGuideCounter starts from a counter made the way Google's guide
// makes one: num_shards on the parent and shards pre-created with count 0,
// before any trigger existed, so their creation events never arrive.
func TestFoldGuideCounter(t *testing.T) {
	t.Parallel()
	h := newHistory(t)
	ctx := context.Background()
	if _, err := h.layout.Counter(h.client, h.id).Set(ctx, map[string]any{core.FieldNumShards: int64(4), "label": "likes"}); err != nil {
		t.Fatal(err)
	}
	for n := 0; n < 4; n++ {
		h.set(n, 0)
	}
	h.events = nil // the trigger was deployed after this point
	h.incr(2, 1)
	h.incr(3, 1)
	h.incr(2, 1)
	h.deliver(h.handler(Config{}), h.events...)
	h.checkExact()
	p := h.parent().Data()
	if p[core.FieldNumShards] != int64(4) || p["label"] != "likes" || p[core.FieldTotal] != int64(3) {
		t.Errorf("parent = %v, want num_shards 4, label likes, total 3", p)
	}
}

func TestFoldParentMissing(t *testing.T) {
	t.Parallel()
	h := newHistory(t)
	h.incr(7, 2)
	h.incr(7, 2)
	if h.parent() != nil {
		t.Fatal("parent exists before the rollup ran")
	}
	h.deliver(h.handler(Config{}), h.events...)
	h.checkExact()
	if _, ok := h.parent().Data()[core.FieldNumShards]; ok {
		t.Error("rollup wrote num_shards; it belongs to the admin")
	}
}

// TestFoldConcurrent delivers every event twice, all at once, to one
// handler, as the platform pushes them.
func TestFoldConcurrent(t *testing.T) {
	t.Parallel()
	h := newHistory(t)
	handler := h.handler(Config{})
	events := workload(h)
	c := h.concurrently(handler)
	c.deliver(append(slices.Clone(events), events...)...)
	c.wait()
	h.checkExact()
	checkSpaced(t, h.folds.writes(), testWindow)
	if w := len(h.folds.writes()); w >= len(events) {
		t.Errorf("%d parent writes for %d events: no folding together", w, len(events))
	}
}

// TestFoldDeletedCounter deletes a counter's shards and parent, then
// delivers every event of its history: no parent comes back.
func TestFoldDeletedCounter(t *testing.T) {
	t.Parallel()
	h := newHistory(t)
	handler := h.handler(Config{})
	h.incr(0, 3)
	h.incr(1, 4)
	h.deliver(handler, h.events...)
	h.checkExact()
	h.delete(0)
	h.delete(1)
	if _, err := h.layout.Counter(h.client, h.id).Delete(context.Background()); err != nil {
		t.Fatal(err)
	}
	h.deliver(handler, h.events...)
	if p := h.parent(); p != nil {
		t.Errorf("a ghost parent came back: %v", p.Data())
	}
}
