package rollup

import (
	"context"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/tools/eventarc"
)

// TestForgedEventsAmongReal delivers forged events of every kind, and
// thousands of deletes of shards that never existed, among a counter's real
// events: the forged ones are logged with their ids and acknowledged, and
// the total stays exact, the shards and num_shards as they were, the parent
// small.
func TestForgedEventsAmongReal(t *testing.T) {
	t.Parallel()
	h := newHistory(t)
	ctx := context.Background()
	if _, err := h.layout.Counter(h.client, h.id).Set(ctx, map[string]any{core.FieldNumShards: 4, core.FieldTotal: 0}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 40; i++ {
		h.incr(i%4, int64(i%3+1))
	}
	events := append([]event.Event(nil), h.events...)
	bad := forged(h)
	for _, e := range bad {
		events = append(events, e)
	}
	// Deletes of shards that never existed, dated now: valid hints, so they
	// cost folds, but nothing else.
	for n := 1000; n < 3000; n++ {
		old := eventarc.IntDoc(h.path(n), "count", 1<<50, time.Now().Add(-time.Minute))
		events = append(events, eventarc.Written(emulatortest.Project, "(default)", old, nil))
	}
	rand.Shuffle(len(events), func(i, j int) { events[i], events[j] = events[j], events[i] })
	handler := h.handler(Config{})
	var wg sync.WaitGroup
	for _, e := range events {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := handler.Handle(ctx, e); err != nil {
				t.Errorf("Handle(%s) = %v; every one of these is acknowledged", e.ID(), err)
			}
		}()
	}
	wg.Wait()
	h.checkExact()
	checkSpaced(t, h.folds.writes(), testWindow)
	if n := h.parent().Data()[core.FieldNumShards]; n != int64(4) {
		t.Errorf("num_shards = %v, want 4 as it was", n)
	}
	refs, err := h.layout.Shards(h.client, h.id, "").DocumentRefs(ctx).GetAll()
	if err != nil || len(refs) != 4 {
		t.Errorf("%d shard documents (%v), want the 4 written", len(refs), err)
	}
	logs := h.logs.String()
	for kind, e := range bad {
		if !strings.Contains(logs, `"event_id":"`+e.ID()+`"`) || !strings.Contains(logs, "dropping event") {
			t.Errorf("%s: no log line drops event %s", kind, e.ID())
		}
	}
}

// TestHandleDropsBadEventsWithoutWriting: each kind of bad event, for a
// counter that does not exist, is acknowledged, logged as an error, and
// writes nothing.
func TestHandleDropsBadEventsWithoutWriting(t *testing.T) {
	t.Parallel()
	h := newHistory(t)
	handler := h.handler(Config{})
	for kind, e := range forged(h) {
		if err := handler.Handle(context.Background(), e); err != nil {
			t.Errorf("%s: Handle = %v; want nil, a bad event is acknowledged", kind, err)
		}
	}
	if !strings.Contains(h.logs.String(), `"severity":"ERROR"`) {
		t.Errorf("bad events not logged as errors:\n%s", h.logs.String())
	}
	if h.parent() != nil {
		t.Errorf("a bad event wrote the parent: %v", h.parent().Data())
	}
	if refs, _ := h.layout.Shards(h.client, h.id, "").DocumentRefs(context.Background()).GetAll(); len(refs) > 0 {
		t.Errorf("a bad event wrote %d shards", len(refs))
	}
}

// TestFourHandlersOneCounter runs four Rollup instances, each with its own
// Firestore client, on one counter while increments go on: every event goes
// to a random instance, one in ten twice and one in ten late. The parent
// takes at most one write per fold spacing, and the total is exact.
func TestFourHandlersOneCounter(t *testing.T) {
	t.Parallel()
	const window = 150 * time.Millisecond
	h := newHistory(t)
	handlers := make([]*Handler, 4)
	for i := range handlers {
		handlers[i] = h.handler(Config{Spacing: window})
	}
	var wg sync.WaitGroup
	deliver := func(e event.Event) {
		defer wg.Done()
		if rand.Float64() < 0.1 {
			time.Sleep(rand.N(500 * time.Millisecond))
		}
		if err := handlers[rand.IntN(len(handlers))].Handle(context.Background(), e); err != nil {
			t.Errorf("Handle: %v", err)
		}
	}
	start := time.Now()
	for time.Since(start) < 2*time.Second {
		e := h.incr(rand.IntN(8), 1)
		copies := 1
		if rand.Float64() < 0.1 {
			copies = 2
		}
		for range copies {
			wg.Add(1)
			go deliver(e)
		}
	}
	wg.Wait()
	h.checkExact()
	writes := h.folds.writes()
	checkSpaced(t, writes, window)
	t.Logf("%d increments, %d parent writes", len(h.events), len(writes))
}

// TestFoldRepairsWrongTypes: a parent whose total, as_of and old
// bookkeeping hold the wrong types is repaired by the next fold.
func TestFoldRepairsWrongTypes(t *testing.T) {
	t.Parallel()
	h := newHistory(t)
	ctx := context.Background()
	_, err := h.layout.Counter(h.client, h.id).Set(ctx, map[string]any{
		core.FieldNumShards: 2, core.FieldTotal: "lots", core.FieldAsOf: 42,
		core.FieldLegacy: map[string]any{"shards": map[string]any{"0": "garbage", "9": map[string]any{"version": "x"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	h.incr(0, 2)
	h.incr(1, 3)
	h.deliver(h.handler(Config{}), h.events...)
	h.checkExact()
}

// TestFoldSkipsWhatItCannotAdd: when the shards sum past int64, or one
// holds a fraction, sum() is a double; the fold adds the shards one by
// one at its read time, in the order of their counts, skips the one it
// cannot add, logs it by name, and writes the sum of the others: the
// count never stops.
func TestFoldSkipsWhatItCannotAdd(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		shards [3]any
		total  int64
		bad    string
	}{
		{"past int64", [3]any{int64(1<<63 - 1), int64(5), int64(-2)}, 3, "/shards/0"}, // added in the order of their counts
		{"a fraction", [3]any{int64(4), 0.5, int64(3)}, 7, "/shards/1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHistory(t)
			ctx := context.Background()
			if _, err := h.layout.Counter(h.client, h.id).Set(ctx, map[string]any{core.FieldNumShards: 3, core.FieldTotal: 7}); err != nil {
				t.Fatal(err)
			}
			for n, v := range c.shards {
				ref := h.layout.Shard(h.client, h.id, "", n)
				if _, err := ref.Set(ctx, map[string]any{h.layout.ShardField: v}); err != nil {
					t.Fatal(err)
				}
				snap, err := ref.Get(ctx)
				if err != nil {
					t.Fatal(err)
				}
				h.record(n, eventarc.Snapshot(snap))
			}
			h.deliver(h.handler(Config{}), h.events...)
			if got, _ := h.parent().Data()[core.FieldTotal].(int64); got != c.total {
				t.Errorf("total %d; want %d, the sum of the shards it can add", got, c.total)
			}
			logs := h.logs.String()
			if !strings.Contains(logs, `"counter":"`+h.id+`"`) || !strings.Contains(logs, h.id+c.bad) || !strings.Contains(logs, "skips it") {
				t.Errorf("no warning names the shard skipped:\n%s", logs)
			}
		})
	}
}

// TestFoldTwoThousandShards folds a counter of 2,000 shards, and grows one
// of 1,000 shards to 2,000 inside its folds' own writes.
func TestFoldTwoThousandShards(t *testing.T) {
	t.Parallel()
	h := newHistory(t)
	ctx := context.Background()
	bw := h.client.BulkWriter(ctx)
	if _, err := bw.Set(h.layout.Counter(h.client, h.id), map[string]any{core.FieldNumShards: 2000}); err != nil {
		t.Fatal(err)
	}
	for n := 0; n < 2000; n++ {
		if _, err := bw.Set(h.layout.Shard(h.client, h.id, "", n), map[string]any{h.layout.ShardField: int64(n % 3)}); err != nil {
			t.Fatal(err)
		}
	}
	bw.End()
	h.incr(1999, 5)
	h.deliver(h.handler(Config{}), h.events...)
	h.checkExact()
	if f := h.folds.folds; len(f) == 0 || f[len(f)-1].Shards[0] != 2000 {
		t.Errorf("the fold summed %v shards, want 2000", f)
	}

	g := newHistory(t)
	if _, err := g.layout.Counter(g.client, g.id).Set(ctx, map[string]any{core.FieldNumShards: 1000}); err != nil {
		t.Fatal(err)
	}
	g.live = g.handler(Config{Grow: GrowPolicy{PerShard: 0.001, Max: 2000, Period: 200 * time.Millisecond}})
	for i := 0; i < 30; i++ {
		g.incr(rand.IntN(1000), 1)
	}
	g.checkExact()
	if n := g.parent().Data()[core.FieldNumShards]; n != int64(2000) {
		t.Errorf("num_shards = %v, want it grown to 2000", n)
	}
	if !strings.Contains(g.logs.String(), "added shards") {
		t.Error("growth was not logged")
	}
}

// TestHintsAloneNeverGrowACounter: growth follows the shards' sum, so a
// flood of events (here, deletes of shards that never existed) for a counter
// whose shards do not move leaves its num_shards as it is.
func TestHintsAloneNeverGrowACounter(t *testing.T) {
	t.Parallel()
	h := newHistory(t)
	if _, err := h.layout.Counter(h.client, h.id).Set(context.Background(), map[string]any{core.FieldNumShards: 2}); err != nil {
		t.Fatal(err)
	}
	h.live = h.handler(Config{Grow: GrowPolicy{PerShard: 1, Max: 8, Period: 100 * time.Millisecond}})
	h.incr(0, 1)
	var wg sync.WaitGroup
	for n := 100; n < 400; n++ {
		old := eventarc.IntDoc(h.path(n), "count", 1<<40, time.Now().Add(-time.Second))
		e := eventarc.Written(emulatortest.Project, "(default)", old, nil)
		e.SetTime(time.Now())
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := h.live.Handle(context.Background(), e); err != nil {
				t.Errorf("Handle: %v", err)
			}
		}()
		time.Sleep(2 * time.Millisecond)
	}
	wg.Wait()
	h.checkExact()
	if n := h.parent().Data()[core.FieldNumShards]; n != int64(2) {
		t.Errorf("num_shards = %v, want 2", n)
	}
}

// TestFoldKeepsTotalWithoutShardField: a rollup configured with a shard
// field no shard holds (TALLY_SHARD_FIELD wrong) logs an error and leaves
// a non-zero total alone instead of writing 0 over it.
func TestFoldKeepsTotalWithoutShardField(t *testing.T) {
	t.Parallel()
	h := newHistory(t)
	if _, err := h.layout.Counter(h.client, h.id).Set(context.Background(), map[string]any{core.FieldNumShards: 2, core.FieldTotal: 12}); err != nil {
		t.Fatal(err)
	}
	h.incr(0, 5)
	before := h.parent()
	h.layout.ShardField = "Count" // the rollup looks for another field
	h.deliver(h.handler(Config{}), h.events...)
	if after := h.parent(); !after.UpdateTime.Equal(before.UpdateTime) {
		t.Errorf("the parent was written: %v", after.Data())
	}
	if !strings.Contains(h.logs.String(), "no shard holds the shard field") {
		t.Errorf("no error logged:\n%s", h.logs.String())
	}
}

// TestPagesCannotPostEvents: a request with an Origin, which a browser
// sends for any page's request and Eventarc never does, is refused, 403,
// and folds nothing, however good the event it carries.
func TestPagesCannotPostEvents(t *testing.T) {
	t.Parallel()
	h := newHistory(t)
	e := h.incr(0, 5)
	r, err := eventarc.Request(context.Background(), "http://tally.test/Rollup", e)
	if err != nil {
		t.Fatal(err)
	}
	r.Header.Set("Origin", "https://evil.example")
	w := httptest.NewRecorder()
	h.handler(Config{}).ServeHTTP(w, r)
	if w.Code != http.StatusForbidden {
		t.Errorf("an event from a page: %d %s, want 403", w.Code, w.Body)
	}
	if p := h.parent(); p != nil {
		t.Errorf("the parent was written: %v", p.Data())
	}
}

// TestShardsDeletedRaiseNoAlarm: a counter whose shards are deleted before
// its parent (tally delete) is folded to 0 with no error logged; the
// alarm for a wrong shard field is for shards that hold none, not for no
// shards.
func TestShardsDeletedRaiseNoAlarm(t *testing.T) {
	t.Parallel()
	h := newHistory(t)
	if _, err := h.layout.Counter(h.client, h.id).Set(context.Background(), map[string]any{core.FieldNumShards: 2}); err != nil {
		t.Fatal(err)
	}
	h.live = h.handler(Config{})
	h.incr(0, 2)
	h.incr(1, 1)
	time.Sleep(2 * testWindow)
	h.delete(0)
	h.delete(1)
	h.checkExact()
	if strings.Contains(h.logs.String(), `"severity":"ERROR"`) || strings.Contains(h.logs.String(), "cannot fold") {
		t.Errorf("deleting the shards logged an error:\n%s", h.logs.String())
	}
}
