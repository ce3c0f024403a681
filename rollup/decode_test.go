package rollup

import (
	"errors"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/googleapis/google-cloudevents-go/cloud/firestoredata"
	"google.golang.org/protobuf/proto"

	"github.com/tallycounters/tally/internal/eventarc"
	"github.com/tallycounters/tally/layout"
)

var (
	t1 = time.Date(2026, 11, 21, 10, 0, 0, 1000, time.UTC)
	t2 = t1.Add(time.Millisecond)
)

func shard(path string, n int64, at time.Time) *eventarc.Doc {
	return eventarc.IntDoc(path, "count", n, at)
}

func withField(d *eventarc.Doc, field string, v *firestoredata.Value) *eventarc.Doc {
	d.Fields = map[string]*firestoredata.Value{field: v}
	return d
}

func TestDecode(t *testing.T) {
	const p = "counters/likes/shards/3"
	written := func(before, after *eventarc.Doc) event.Event {
		return eventarc.Written("demo", "(default)", before, after)
	}
	retype := func(e event.Event, typ string) event.Event { e.SetType(typ); return e }
	recontent := func(e event.Event, ct string) event.Event { e.SetData(ct, e.Data()); return e }
	garbage := written(nil, shard(p, 1, t1))
	garbage.SetData("application/protobuf", []byte{0xff, 0xff, 0xff})
	noTime := written(nil, shard(p, 1, t1))
	raw, _ := proto.Marshal(&firestoredata.DocumentEventData{
		Value: &firestoredata.Document{Name: "projects/demo/databases/(default)/documents/" + p},
	})
	noTime.SetData("application/protobuf", raw)

	tests := []struct {
		name  string
		event event.Event
		field string
		want  Change // compared unless bad
		bad   bool
	}{
		{name: "update", event: written(shard(p, 4, t1), shard(p, 5, t2)),
			want: Change{Counter: "likes", Shard: 3, Before: Snapshot{true, t1, 4}, After: Snapshot{true, t2, 5}}},
		{name: "create", event: written(nil, shard(p, 1, t1)),
			want: Change{Counter: "likes", Shard: 3, After: Snapshot{true, t1, 1}}},
		{name: "delete", event: written(shard(p, 7, t1), nil),
			want: Change{Counter: "likes", Shard: 3, Before: Snapshot{true, t1, 7}}},
		{name: "negative count", event: written(shard(p, 0, t1), shard(p, -2, t2)),
			want: Change{Counter: "likes", Shard: 3, Before: Snapshot{true, t1, 0}, After: Snapshot{true, t2, -2}}},
		{name: "field absent counts 0", event: written(nil, &eventarc.Doc{Path: p, Updated: t1}),
			want: Change{Counter: "likes", Shard: 3, After: Snapshot{true, t1, 0}}},
		{name: "versions cut to microseconds", event: written(shard(p, 1, t1.Add(999)), shard(p, 2, t2.Add(1))),
			want: Change{Counter: "likes", Shard: 3, Before: Snapshot{true, t1, 1}, After: Snapshot{true, t2, 2}}},
		{name: "configured field", field: "Count", event: written(nil, eventarc.IntDoc(p, "Count", 9, t1)),
			want: Change{Counter: "likes", Shard: 3, After: Snapshot{true, t1, 9}}},
		{name: "other fields ignored", event: written(nil, withField(shard(p, 0, t1), "note", &firestoredata.Value{ValueType: &firestoredata.Value_StringValue{StringValue: "x"}})),
			want: Change{Counter: "likes", Shard: 3, After: Snapshot{true, t1, 0}}},

		{name: "foreign type", bad: true, event: retype(written(nil, shard(p, 1, t1)), "google.cloud.pubsub.topic.v1.messagePublished")},
		{name: "json data", bad: true, event: recontent(written(nil, shard(p, 1, t1)), "application/json")},
		{name: "not a protobuf", bad: true, event: garbage},
		{name: "no document", bad: true, event: written(nil, nil)},
		{name: "parent document", bad: true, event: written(nil, shard("counters/likes", 1, t1))},
		{name: "other collection", bad: true, event: written(nil, shard("votes/likes/shards/3", 1, t1))},
		{name: "other subcollection", bad: true, event: written(nil, shard("counters/likes/parts/3", 1, t1))},
		{name: "nested deeper", bad: true, event: written(nil, shard("counters/likes/shards/3/x/y", 1, t1))},
		{name: "shard not a number", bad: true, event: written(nil, shard("counters/likes/shards/abc", 1, t1))},
		{name: "shard negative", bad: true, event: written(nil, shard("counters/likes/shards/-1", 1, t1))},
		{name: "shard leading zero", bad: true, event: written(nil, shard("counters/likes/shards/03", 1, t1))},
		{name: "double count", bad: true, event: written(nil, withField(shard(p, 0, t1), "count", &firestoredata.Value{ValueType: &firestoredata.Value_DoubleValue{DoubleValue: 1.5}}))},
		{name: "string count", bad: true, event: written(shard(p, 0, t1), withField(shard(p, 0, t2), "count", &firestoredata.Value{ValueType: &firestoredata.Value_StringValue{StringValue: "1"}}))},
		{name: "paths differ", bad: true, event: written(shard(p, 0, t1), shard("counters/likes/shards/4", 1, t2))},
		{name: "no update time", bad: true, event: noTime},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := layout.Default()
			if tc.field != "" {
				l.ShardField = tc.field
			}
			got, err := Decoder{Layout: l}.Decode(tc.event)
			if tc.bad {
				if !errors.Is(err, ErrMalformed) {
					t.Fatalf("Decode = %v, %v; want an ErrMalformed error", got, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			tc.want.EventID = tc.event.ID()
			if got != tc.want {
				t.Errorf("Decode =\n %+v\nwant\n %+v", got, tc.want)
			}
		})
	}
}
