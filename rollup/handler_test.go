package rollup

import (
	"bytes"
	"context"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"

	"github.com/tallycounters/tally/internal/cloudlog"
	"github.com/tallycounters/tally/internal/emulatortest"
	"github.com/tallycounters/tally/internal/eventarc"
	"github.com/tallycounters/tally/layout"
)

// eventFor is the event Eventarc would send for change c.
func eventFor(c Change) event.Event {
	path := "counters/" + c.Counter + "/shards/" + strconv.Itoa(c.Shard)
	doc := func(s Snapshot) *eventarc.Doc {
		if !s.Exists {
			return nil
		}
		return eventarc.IntDoc(path, layout.DefaultShardField, s.Count, s.Version)
	}
	return eventarc.Written(emulatortest.Project, "(default)", doc(c.Before), doc(c.After))
}

func TestHandleAppliesEvents(t *testing.T) {
	h := newHistory(t)
	workload(h)
	handler := New(h.client, Config{Layout: h.layout})
	for _, c := range h.changes {
		e := eventFor(c)
		for i := 0; i < 2; i++ { // every event redelivered
			if err := handler.Handle(context.Background(), e); err != nil {
				t.Fatalf("Handle: %v", err)
			}
		}
	}
	h.checkExact()
}

// TestHandleAcknowledgesMalformed checks that a bad event is logged with its
// id, acknowledged (nil, so never retried) and writes nothing.
func TestHandleAcknowledgesMalformed(t *testing.T) {
	client := emulatortest.Client(t)
	id := emulatortest.ID(t)
	var logs bytes.Buffer
	handler := New(client, Config{Layout: layout.Default(), Logger: cloudlog.New(&logs, slog.LevelInfo)})
	now := time.Now()
	foreign := eventFor(Change{Counter: id, Shard: 1, After: Snapshot{true, now, 1}})
	foreign.SetType("google.cloud.storage.object.v1.finalized")
	garbage := eventarc.Written(emulatortest.Project, "(default)", nil, eventarc.IntDoc("counters/"+id+"/shards/1", "count", 1, now))
	garbage.SetData("application/protobuf", []byte("not a protobuf at all"))
	bad := []event.Event{
		foreign,
		garbage,
		eventarc.Written(emulatortest.Project, "(default)", nil, eventarc.IntDoc("counters/"+id, "count", 1, now)),
		eventarc.Written(emulatortest.Project, "(default)", nil, eventarc.IntDoc("counters/"+id+"/shards/x", "count", 1, now)),
	}
	for _, e := range bad {
		if err := handler.Handle(context.Background(), e); err != nil {
			t.Errorf("Handle(%s) = %v; want nil, a malformed event is acknowledged", e.ID(), err)
		}
		if !strings.Contains(logs.String(), `"event_id":"`+e.ID()+`"`) {
			t.Errorf("no log line names event %s:\n%s", e.ID(), logs.String())
		}
	}
	if !strings.Contains(logs.String(), `"severity":"ERROR"`) {
		t.Errorf("malformed events not logged as errors:\n%s", logs.String())
	}
	snap, _ := layout.Default().Counter(client, id).Get(context.Background())
	if snap.Exists() {
		t.Errorf("a malformed event wrote the parent: %v", snap.Data())
	}
}

// TestHandleRetriesTransient points the handler at a closed port: the error
// is returned, so the platform retries.
func TestHandleRetriesTransient(t *testing.T) {
	handler := New(emulatortest.Unreachable(t), Config{Layout: layout.Default()})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	e := eventFor(Change{Counter: "c", Shard: 0, After: Snapshot{true, time.Now(), 1}})
	if err := handler.Handle(ctx, e); err == nil {
		t.Error("Handle returned nil with Firestore down; the event would be lost")
	}
}
