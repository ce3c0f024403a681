package rollup

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/googleapis/google-cloudevents-go/cloud/firestoredata"
	"google.golang.org/protobuf/proto"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/tools/eventarc"
)

// FuzzDecode feeds the decoder arbitrary event data, types, subjects and
// event times. It must never panic; what it refuses is malformed, foreign
// or future, so that Handle logs and acknowledges it; what it takes names
// the shard that the data's document is, of this project and database, at a
// time no later than the skew allows.
func FuzzDecode(f *testing.F) {
	const p = "counters/likes/shards/3"
	data := func(before, after *eventarc.Doc) []byte {
		return eventarc.Written("demo", "(default)", before, after).Data()
	}
	for _, s := range []struct {
		data    []byte
		typ     string
		subject string
		offset  time.Duration // event time after received
	}{
		{data(shard(p, 4, t1), shard(p, 5, t2)), eventarc.WrittenType, "documents/" + p, -time.Second},
		{data(nil, shard(p, 1, t1)), "google.cloud.firestore.document.v1.created", "", -time.Second},
		{data(shard(p, 7, t1), nil), eventarc.WrittenType, "documents/" + p, -2 * time.Second},
		{data(shard(p, 7, t1), nil), eventarc.WrittenType, "documents/" + p, 0},
		{data(nil, shard(p, 1, time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC))), eventarc.WrittenType, "", 0},
		{data(nil, shard(p, 1, t1)), eventarc.WrittenType, "", time.Hour},
		{data(nil, shard("counters/likes", 1, t1)), eventarc.WrittenType, "", 0},
		{data(nil, shard("counters/likes/shards/03", 1, t1)), eventarc.WrittenType, "", 0},
		{data(nil, shard("counters/caf\u00e9/shards/1", 1, t1)), eventarc.WrittenType, "", 0},
		{data(shard(p, 0, t1), shard("counters/likes/shards/4", 1, t2)), eventarc.WrittenType, "", 0},
		{eventarc.Written("demo", "db2", nil, shard(p, 1, t1)).Data(), eventarc.WrittenType, "", 0},
		{eventarc.Written("other", "(default)", nil, shard(p, 1, t1)).Data(), eventarc.WrittenType, "", 0},
		{[]byte{0xff, 0xff}, eventarc.WrittenType, "", 0},
		{nil, eventarc.WrittenType, "", 0},
		{data(nil, shard(p, 1, t1)), "google.cloud.pubsub.topic.v1.messagePublished", "", 0},
	} {
		f.Add(s.data, s.typ, s.subject, int64(s.offset))
	}
	d := decoder{Layout: core.Default(), Project: "demo"}
	f.Fuzz(func(t *testing.T, raw []byte, typ, subject string, offset int64) {
		e := event.New()
		e.SetID("fuzz")
		e.SetType(typ)
		e.SetSubject(subject)
		if offset != 0 {
			e.SetTime(received.Add(time.Duration(offset)))
		}
		if err := e.SetData("application/protobuf", raw); err != nil {
			t.Fatal(err)
		}
		h, err := d.Decode(e, received)
		if err != nil {
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrForeign) && !errors.Is(err, ErrFuture) {
				t.Fatalf("Decode: %v is none of the errors that Handle acknowledges", err)
			}
			return
		}
		var doc firestoredata.DocumentEventData
		if err := proto.Unmarshal(raw, &doc); err != nil {
			t.Fatalf("took %+v from data that is not a DocumentEventData: %v", h, err)
		}
		name := doc.GetValue().GetName()
		if name == "" {
			name = doc.GetOldValue().GetName()
		}
		path, ok := strings.CutPrefix(name, "projects/demo/databases/(default)/documents/")
		id, life, n, perr := d.Layout.ParseShardPath(path)
		if u, decoded := unescapePath(path); decoded && (perr != nil || id != h.Counter) {
			id, life, n, perr = d.Layout.ParseShardPath(u) // the subject named it percent-encoded
		}
		switch {
		case !ok || perr != nil || id != h.Counter || life != h.Life || n != h.Shard:
			t.Fatalf("took %+v from a write to %q", h, name)
		case core.ValidID(h.Counter) != nil:
			t.Fatalf("took counter id %q", h.Counter)
		case h.At.IsZero() || h.At.After(received.Add(DefaultMaxSkew)):
			t.Fatalf("took %+v, dated past %s", h, received.Add(DefaultMaxSkew))
		case h.EventID != "fuzz":
			t.Fatalf("event id %q", h.EventID)
		}
	})
}
