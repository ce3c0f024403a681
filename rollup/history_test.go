package rollup

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/firestore"
	"github.com/cloudevents/sdk-go/v2/event"

	"github.com/tallycounters/tally/internal/adder"
	"github.com/tallycounters/tally/internal/cloudlog"
	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/testkit/layouttest"
	"github.com/tallycounters/tally/internal/testkit/testio"
	"github.com/tallycounters/tally/internal/tools/eventarc"
)

// testWindow keeps the tests quick; the bound it sets is checked all the same.
const testWindow = 50 * time.Millisecond

// history makes real shard writes on the emulator and records the event
// Eventarc would send for each, with the versions Firestore gave them.
type history struct {
	t      *testing.T
	client *firestore.Client
	layout core.Layout
	id     string
	last   map[int]*eventarc.Doc
	events []event.Event

	// live, if set, has each write's event delivered to it right after the
	// write, as a running system would, unless skip says otherwise.
	live *Handler
	skip func(i int) bool

	logs  testio.Buffer
	folds foldLog
}

func newHistory(t *testing.T) *history {
	return &history{t: t, client: emulatortest.Client(t), layout: core.Default(), id: emulatortest.ID(t), last: map[int]*eventarc.Doc{}}
}

// handler is a Rollup instance for the history's counter, with its own
// Firestore client, logging to h.logs and recording its folds in h.folds.
func (h *history) handler(cfg Config) *Handler {
	cfg.Layout = layouttest.Public(h.layout)
	cfg.Project = emulatortest.Project
	if cfg.Spacing == 0 {
		cfg.Spacing = testWindow
	}
	cfg.Logger = cloudlog.New(&h.logs, slog.LevelDebug)
	cfg.OnFold = h.folds.add
	return New(emulatortest.Client(h.t), cfg)
}

func (h *history) path(n int) string {
	return fmt.Sprintf("%s/%s/%s/%d", h.layout.Collection, h.id, core.ShardsCollection, n)
}

func (h *history) record(n int, after *eventarc.Doc) event.Event {
	e := eventarc.Written(emulatortest.Project, "(default)", h.last[n], after)
	h.last[n] = after
	h.events = append(h.events, e)
	if h.live != nil && (h.skip == nil || !h.skip(len(h.events)-1)) {
		h.deliver(h.live, e)
	}
	return e
}

// set writes count to shard n, as a create or an update.
func (h *history) set(n int, count int64) event.Event {
	h.t.Helper()
	wr, err := h.layout.Shard(h.client, h.id, "", n).Set(context.Background(), map[string]any{h.layout.ShardField: count})
	if err != nil {
		h.t.Fatalf("set shard %d: %v", n, err)
	}
	return h.record(n, eventarc.IntDoc(h.path(n), h.layout.ShardField, count, wr.UpdateTime))
}

// incr adds by to shard n with a server-side increment, as Increment does.
func (h *history) incr(n int, by int64) event.Event {
	h.t.Helper()
	wr, err := h.layout.Shard(h.client, h.id, "", n).Set(context.Background(), // as Increment writes it
		adder.ShardFields(h.layout, map[string]int64{h.layout.ShardField: by}, firestore.Delete, firestore.Delete), firestore.MergeAll)
	if err != nil {
		h.t.Fatalf("increment shard %d: %v", n, err)
	}
	var count int64
	if prev := h.last[n]; prev != nil {
		count = prev.Fields[h.layout.ShardField].GetIntegerValue()
	}
	return h.record(n, eventarc.IntDoc(h.path(n), h.layout.ShardField, count+by, wr.UpdateTime))
}

func (h *history) delete(n int) event.Event {
	h.t.Helper()
	if _, err := h.layout.Shard(h.client, h.id, "", n).Delete(context.Background()); err != nil {
		h.t.Fatalf("delete shard %d: %v", n, err)
	}
	return h.record(n, nil)
}

// deliver hands each event to handler, one after another.
func (h *history) deliver(handler *Handler, events ...event.Event) {
	h.t.Helper()
	for _, e := range events {
		if err := handler.Handle(context.Background(), e); err != nil {
			h.t.Fatalf("Handle(%s): %v", e.ID(), err)
		}
	}
}

// concurrent hands events to a handler each in a goroutine of its own, as
// the platform pushes them; wait waits for every answer.
type concurrent struct {
	t       *testing.T
	handler *Handler
	wg      sync.WaitGroup
}

func (h *history) concurrently(handler *Handler) *concurrent {
	return &concurrent{t: h.t, handler: handler}
}

func (c *concurrent) deliver(events ...event.Event) {
	for _, e := range events {
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			if err := c.handler.Handle(context.Background(), e); err != nil {
				c.t.Errorf("Handle(%s): %v", e.ID(), err)
			}
		}()
	}
}

func (c *concurrent) wait() { c.wg.Wait() }

// sum is the true value: the shards' counts, read now.
func (h *history) sum() int64 {
	h.t.Helper()
	docs, err := h.layout.Shards(h.client, h.id, "").Documents(context.Background()).GetAll()
	if err != nil {
		h.t.Fatalf("read shards: %v", err)
	}
	var s int64
	for _, d := range docs {
		n, _ := d.Data()[h.layout.ShardField].(int64)
		s += n
	}
	return s
}

// parent reads the counter's parent document; nil when it does not exist.
func (h *history) parent() *firestore.DocumentSnapshot {
	h.t.Helper()
	snap, err := h.layout.Counter(h.client, h.id).Get(context.Background())
	if err != nil && !snap.Exists() {
		return nil
	}
	if err != nil {
		h.t.Fatalf("read parent: %v", err)
	}
	return snap
}

// checkExact checks that the parent holds the shards' sum, as_of a
// timestamp, nothing of the old bookkeeping, and is small.
func (h *history) checkExact() {
	h.t.Helper()
	snap := h.parent()
	if snap == nil {
		h.t.Fatal("no parent")
	}
	d := snap.Data()
	if want := h.sum(); d[core.FieldTotal] != want {
		h.t.Errorf("total = %v (%T), want the shards' sum %d", d[core.FieldTotal], d[core.FieldTotal], want)
	}
	if _, ok := d[core.FieldAsOf].(time.Time); !ok {
		h.t.Errorf("as_of = %v (%T), want a timestamp", d[core.FieldAsOf], d[core.FieldAsOf])
	}
	if _, ok := d[core.FieldLegacy]; ok {
		h.t.Errorf("the old bookkeeping is still there: %v", d[core.FieldLegacy])
	}
	if size := docSize(d); size > 64<<10 {
		h.t.Errorf("parent is about %d bytes, over 64 KiB", size)
	}
}

// docSize is about the size Firestore bills for a document's fields: the
// length of their JSON, which is no smaller.
func docSize(d map[string]any) int {
	b, _ := json.Marshal(d)
	return len(b)
}

// foldLog records the folds of one or more handlers.
type foldLog struct {
	mu    sync.Mutex
	folds []FoldInfo
}

func (l *foldLog) add(f FoldInfo) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.folds = append(l.folds, f)
}

// writes returns the commit times of the folds that wrote, in order.
func (l *foldLog) writes() []time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []time.Time
	for _, f := range l.folds {
		if f.Wrote {
			out = append(out, f.Updated)
		}
	}
	slicesSortTimes(out)
	return out
}
