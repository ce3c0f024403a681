package rollup

import (
	"context"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/testkit/layouttest"
	"github.com/tallycounters/tally/internal/tools/eventarc"
)

// forged returns events an attacker or a misrouted trigger could post, each
// of a kind the rollup must log and acknowledge, for counter id, and says
// which kind each is.
func forged(h *history) map[string]event.Event {
	now := time.Now()
	shard := h.path(1)
	future := eventarc.Written(emulatortest.Project, "(default)", nil, eventarc.IntDoc(shard, "count", 1<<40, time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)))
	futureTime := eventarc.Written(emulatortest.Project, "(default)", nil, eventarc.IntDoc(shard, "count", 1, now))
	futureTime.SetTime(now.Add(time.Hour))
	garbage := eventarc.Written(emulatortest.Project, "(default)", nil, eventarc.IntDoc(shard, "count", 1, now))
	garbage.SetData("application/protobuf", []byte("not a protobuf at all"))
	foreignType := eventarc.Written(emulatortest.Project, "(default)", nil, eventarc.IntDoc(shard, "count", 1, now))
	foreignType.SetType("google.cloud.storage.object.v1.finalized")
	return map[string]event.Event{
		"dated 2100":          future,
		"event time ahead":    futureTime,
		"other project":       eventarc.Written("someone-else", "(default)", nil, eventarc.IntDoc(shard, "count", 99, now)),
		"other database":      eventarc.Written(emulatortest.Project, "other-db", nil, eventarc.IntDoc(shard, "count", 99, now)),
		"not a protobuf":      garbage,
		"not Firestore":       foreignType,
		"the parent":          eventarc.Written(emulatortest.Project, "(default)", nil, eventarc.IntDoc("counters/"+h.id, "total", 5, now)),
		"shard not a number":  eventarc.Written(emulatortest.Project, "(default)", nil, eventarc.IntDoc("counters/"+h.id+"/shards/x", "count", 5, now)),
		"other subcollection": eventarc.Written(emulatortest.Project, "(default)", nil, eventarc.IntDoc("counters/"+h.id+"/votes/1", "count", 5, now)),
	}
}

// TestHandleRetriesTransient points the handler at a closed port: the error
// is returned, so the platform retries.
func TestHandleRetriesTransient(t *testing.T) {
	handler := New(emulatortest.Unreachable(t), Config{Layout: layouttest.Public(core.Default()), Spacing: testWindow})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	e := eventarc.Written(emulatortest.Project, "(default)", nil, eventarc.IntDoc("counters/c/shards/0", "count", 1, time.Now()))
	if err := handler.Handle(ctx, e); err == nil {
		t.Error("Handle returned nil with Firestore down; the event would be lost")
	}
}
