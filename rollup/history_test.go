package rollup

import (
	"context"
	"testing"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/internal/emulatortest"
	"github.com/tallycounters/tally/layout"
)

// history makes real shard writes on the emulator and records the change
// each one's event would carry, with the versions Firestore gave them.
type history struct {
	t       *testing.T
	client  *firestore.Client
	layout  layout.Layout
	id      string
	last    map[int]Snapshot
	changes []Change
}

func newHistory(t *testing.T) *history {
	return &history{t: t, client: emulatortest.Client(t), layout: layout.Default(), id: emulatortest.ID(t), last: map[int]Snapshot{}}
}

func (h *history) record(n int, after Snapshot) Change {
	c := Change{EventID: h.id, Counter: h.id, Shard: n, Before: h.last[n], After: after}
	h.last[n] = after
	h.changes = append(h.changes, c)
	return c
}

// set writes count to shard n, as a create or an update.
func (h *history) set(n int, count int64) Change {
	h.t.Helper()
	wr, err := h.layout.Shard(h.client, h.id, n).Set(context.Background(), map[string]any{h.layout.ShardField: count})
	if err != nil {
		h.t.Fatalf("set shard %d: %v", n, err)
	}
	return h.record(n, Snapshot{Exists: true, Version: wr.UpdateTime, Count: count})
}

// incr adds by to shard n with a server-side increment, as Increment does.
func (h *history) incr(n int, by int64) Change {
	h.t.Helper()
	wr, err := h.layout.Shard(h.client, h.id, n).Set(context.Background(),
		map[string]any{h.layout.ShardField: firestore.Increment(by)}, firestore.MergeAll)
	if err != nil {
		h.t.Fatalf("increment shard %d: %v", n, err)
	}
	return h.record(n, Snapshot{Exists: true, Version: wr.UpdateTime, Count: h.last[n].Count + by})
}

func (h *history) delete(n int) Change {
	h.t.Helper()
	if _, err := h.layout.Shard(h.client, h.id, n).Delete(context.Background()); err != nil {
		h.t.Fatalf("delete shard %d: %v", n, err)
	}
	return h.record(n, Snapshot{})
}

// sum is the true value: the shards' counts, read now.
func (h *history) sum() int64 {
	h.t.Helper()
	docs, err := h.layout.Shards(h.client, h.id).Documents(context.Background()).GetAll()
	if err != nil {
		h.t.Fatalf("read shards: %v", err)
	}
	var s int64
	for _, d := range docs {
		n, err := countOf(d, h.layout.ShardField)
		if err != nil {
			h.t.Fatal(err)
		}
		s += n
	}
	return s
}

// parent reads the counter's parent document; nil when it does not exist.
func (h *history) parent() map[string]any {
	h.t.Helper()
	snap, err := h.layout.Counter(h.client, h.id).Get(context.Background())
	if err != nil {
		if !snap.Exists() {
			return nil
		}
		h.t.Fatalf("read parent: %v", err)
	}
	return snap.Data()
}

// total reads the parent's total.
func (h *history) total() int64 {
	h.t.Helper()
	n, _ := h.parent()[layout.FieldTotal].(int64)
	return n
}

// apply feeds changes to Apply one at a time.
func (h *history) apply(changes ...Change) {
	h.t.Helper()
	a := NewApplier(h.client, h.layout)
	for _, c := range changes {
		if _, err := a.Apply(context.Background(), h.id, []Change{c}); err != nil {
			h.t.Fatalf("Apply(%v): %v", c, err)
		}
	}
}

// checkExact fails unless total equals the shards' sum.
func (h *history) checkExact() {
	h.t.Helper()
	if got, want := h.total(), h.sum(); got != want {
		h.t.Errorf("total = %d, want the shards' sum %d", got, want)
	}
}
