package rollup

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/googleapis/google-cloudevents-go/cloud/firestoredata"
	"google.golang.org/protobuf/proto"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/core/rank"
	"github.com/tallycounters/tally/internal/tools/eventarc"
	"github.com/tallycounters/tally/internal/trigger"
)

var (
	t1       = time.Date(2026, 11, 21, 10, 0, 0, 1000, time.UTC)
	t2       = t1.Add(time.Millisecond)
	received = t2.Add(time.Second)
)

func shard(path string, n int64, at time.Time) *eventarc.Doc {
	return eventarc.IntDoc(path, "count", n, at)
}

func TestDecode(t *testing.T) {
	const p = "counters/likes/shards/3"
	written := func(before, after *eventarc.Doc) event.Event {
		e := eventarc.Written("demo", "(default)", before, after)
		e.SetTime(t1.Truncate(time.Second)) // the emulator's event time has whole seconds
		return e
	}
	edit := func(e event.Event, f func(*event.Event)) event.Event { f(&e); return e }
	withData := func(d *firestoredata.DocumentEventData) event.Event {
		raw, _ := proto.Marshal(d)
		return edit(written(nil, shard(p, 1, t1)), func(e *event.Event) { e.SetData("application/protobuf", raw) })
	}
	tests := []struct {
		name    string
		event   event.Event
		field   string
		want    eventHint // compared unless err is set
		err     error     // the kind of error, if bad
		project string
	}{
		{name: "update", event: written(shard(p, 4, t1), shard(p, 5, t2)), want: eventHint{Counter: "likes", Shard: 3, At: t2}},
		{name: "create", event: written(nil, shard(p, 1, t1)), want: eventHint{Counter: "likes", Shard: 3, At: t1}},
		{name: "delete with an event time in whole seconds", event: written(shard(p, 7, t1), nil),
			want: eventHint{Counter: "likes", Shard: 3, At: t1.Truncate(time.Second).Add(time.Second - time.Microsecond)}},
		{name: "delete with an exact event time", event: edit(written(shard(p, 7, t1), nil), func(e *event.Event) { e.SetTime(t2.Add(5 * time.Microsecond)) }),
			want: eventHint{Counter: "likes", Shard: 3, At: t2.Add(5 * time.Microsecond)}},
		{name: "delete without an event time", event: edit(written(shard(p, 7, t1), nil), func(e *event.Event) { e.SetTime(time.Time{}) }),
			want: eventHint{Counter: "likes", Shard: 3, At: received}},
		{name: "delete dated before its version", event: edit(written(shard(p, 7, t2), nil), func(e *event.Event) { e.SetTime(t1) }),
			want: eventHint{Counter: "likes", Shard: 3, At: t2.Add(time.Microsecond)}},
		{name: "update times cut to microseconds", event: written(shard(p, 1, t1), shard(p, 2, t2.Add(999))), want: eventHint{Counter: "likes", Shard: 3, At: t2}},
		{name: "counts are not read", event: written(nil, &eventarc.Doc{Path: p, Updated: t1,
			Fields: map[string]*firestoredata.Value{"count": {ValueType: &firestoredata.Value_StringValue{StringValue: "x"}}}}),
			want: eventHint{Counter: "likes", Shard: 3, At: t1}},
		{name: "the project checked", project: "demo", event: written(nil, shard(p, 1, t1)), want: eventHint{Counter: "likes", Shard: 3, At: t1}},
		{name: "any id Firestore takes", event: written(nil, shard("counters/caf\u00e9 @:+%/shards/1", 1, t1)), want: eventHint{Counter: "caf\u00e9 @:+%", Shard: 1, At: t1}},
		{name: "a subject percent-encoded", event: edit(written(nil, shard("counters/a b@c/shards/1", 1, t1)), func(e *event.Event) { e.SetSubject("documents/counters/a%20b%40c/shards/1") }),
			want: eventHint{Counter: "a b@c", Shard: 1, At: t1}},
		{name: "a name percent-encoded", event: edit(written(nil, shard("counters/a%20b%25/shards/1", 1, t1)), func(e *event.Event) { e.SetSubject("documents/counters/a b%/shards/1") }),
			want: eventHint{Counter: "a b%", Shard: 1, At: t1}},
		{name: "an id of '%' and digits, in both", event: written(nil, shard("counters/%41/shards/1", 1, t1)), want: eventHint{Counter: "%41", Shard: 1, At: t1}},
		{name: "the emulator's source is not read", event: edit(written(nil, shard(p, 1, t1)), func(e *event.Event) {
			e.SetSource("//firestore.googleapis.com/projects/projects/demo/databases/(default)")
		}), want: eventHint{Counter: "likes", Shard: 3, At: t1}},

		{name: "foreign type", err: ErrMalformed, event: edit(written(nil, shard(p, 1, t1)), func(e *event.Event) { e.SetType("google.cloud.pubsub.topic.v1.messagePublished") })},
		{name: "json data", err: ErrMalformed, event: edit(written(nil, shard(p, 1, t1)), func(e *event.Event) { e.SetData("application/json", e.Data()) })},
		{name: "not a protobuf", err: ErrMalformed, event: edit(written(nil, shard(p, 1, t1)), func(e *event.Event) { e.SetData("application/protobuf", []byte{0xff, 0xff}) })},
		{name: "no document", err: ErrMalformed, event: written(nil, nil)},
		{name: "no update time", err: ErrMalformed, event: withData(&firestoredata.DocumentEventData{
			Value: &firestoredata.Document{Name: "projects/demo/databases/(default)/documents/" + p}})},
		{name: "name not a resource name", err: ErrMalformed, event: withData(&firestoredata.DocumentEventData{
			Value: &firestoredata.Document{Name: p}})},
		{name: "paths differ", err: ErrMalformed, event: written(shard(p, 0, t1), shard("counters/likes/shards/4", 1, t2))},
		{name: "subject names another document", err: ErrMalformed, event: edit(written(nil, shard(p, 1, t1)), func(e *event.Event) { e.SetSubject("documents/counters/other/shards/3") })},
		{name: "subject encodes a '/' in an id", err: ErrMalformed, event: edit(written(nil, shard(p, 1, t1)), func(e *event.Event) { e.SetSubject("documents/counters%2Flikes/shards/3") })},
		{name: "other project", err: ErrForeign, project: "mine", event: written(nil, shard(p, 1, t1))},
		{name: "other database", err: ErrForeign, event: eventarc.Written("demo", "db2", nil, shard(p, 1, t1))},
		{name: "parent document", err: ErrForeign, event: written(nil, shard("counters/likes", 1, t1))},
		{name: "other collection", err: ErrForeign, event: written(nil, shard("votes/likes/shards/3", 1, t1))},
		{name: "other subcollection", err: ErrForeign, event: written(nil, shard("counters/likes/parts/3", 1, t1))},
		{name: "nested deeper", err: ErrForeign, event: written(nil, shard("counters/likes/shards/3/x/y", 1, t1))},
		{name: "shard not a number", err: ErrForeign, event: written(nil, shard("counters/likes/shards/abc", 1, t1))},
		{name: "shard negative", err: ErrForeign, event: written(nil, shard("counters/likes/shards/-1", 1, t1))},
		{name: "shard leading zero", err: ErrForeign, event: written(nil, shard("counters/likes/shards/03", 1, t1))},
		{name: "written in 2100", err: ErrFuture, event: written(nil, shard(p, 1, time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)))},
		{name: "event time an hour ahead", err: ErrFuture, event: edit(written(nil, shard(p, 1, t1)), func(e *event.Event) { e.SetTime(received.Add(time.Hour)) })},
		{name: "delete dated 2100", err: ErrFuture, event: edit(written(shard(p, 1, t1), nil), func(e *event.Event) { e.SetTime(time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)) })},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := core.Default()
			if tc.field != "" {
				l.ShardField = tc.field
			}
			got, err := decoder{Layout: l, Project: tc.project}.Decode(tc.event, received)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("Decode = %v, %v; want a %v error", got, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			tc.want.EventID = tc.event.ID()
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Decode =\n %+v\nwant\n %+v", got, tc.want)
			}
		})
	}
}

// TestDecodeLife: a shard of a counted document is of one life of it, the
// hint says which; a shard outside every life is no shard of tally's.
func TestDecodeLife(t *testing.T) {
	var l core.Layout
	var err error
	if l.Docs, err = core.ParseCounts("posts:likes"); err != nil {
		t.Fatal(err)
	}
	decode := func(path string) (eventHint, error) {
		e := eventarc.Written("demo", "(default)", nil, shard(path, 1, t1))
		e.SetTime(t1)
		return decoder{Layout: l}.Decode(e, received)
	}
	got, err := decode("posts/p1/lives/1732000000000017/shards/2")
	if err != nil || got.Counter != "posts/p1" || got.Life != "1732000000000017" || got.Shard != 2 {
		t.Errorf("Decode = %+v, %v; want posts/p1, life 1732000000000017, shard 2", got, err)
	}
	if _, err := decode("posts/p1/shards/2"); !errors.Is(err, ErrForeign) {
		t.Errorf("a shard outside every life: %v; want %v", err, ErrForeign)
	}
}

// TestDecodeCreated: the creation of a counted document is a hint for it,
// in the life its creation began, dated at its creation; the creation of
// any other document is no hint of tally's.
func TestDecodeCreated(t *testing.T) {
	var l core.Layout
	var err error
	if l.Docs, err = core.ParseCounts("posts:likes,comments=count(comments);stats/site:users=count(/users)"); err != nil {
		t.Fatal(err)
	}
	created := func(path string) (eventHint, error) {
		e := eventarc.Written("demo", "(default)", nil, shard(path, 1, t1))
		e.SetType(trigger.Created)
		e.SetTime(t1)
		return decoder{Layout: l}.Decode(e, received)
	}
	for _, path := range []string{"posts/a b@c", "stats/site"} {
		got, err := created(path)
		if err != nil || !got.Created || got.Counter != path || got.Life != l.LifeOf(t1) || !got.At.Equal(t1) {
			t.Errorf("the creation of %s: %+v, %v", path, got, err)
		}
	}
	for _, path := range []string{"posts/p1/comments/c1", "stats/other", "users/u1", "posts/p1/lives/1/shards/0"} {
		if got, err := created(path); !errors.Is(err, ErrForeign) {
			t.Errorf("the creation of %s: %+v, %v; want %v", path, got, err, ErrForeign)
		}
	}
	guide := eventarc.Written("demo", "(default)", nil, shard("counters/likes", 1, t1))
	guide.SetType(trigger.Created)
	if _, err := (decoder{Layout: core.Default()}).Decode(guide, received); !errors.Is(err, ErrForeign) {
		t.Errorf("a creation in the guide layout: %v; want %v", err, ErrForeign)
	}
}

// TestDecodeDeleted: the deletion of a ranked document is a hint that
// takes it off its boards, with the cells its last state recorded; the
// deletion of any other document, or one with no old state, is none.
func TestDecodeDeleted(t *testing.T) {
	var l core.Layout
	var err error
	if l.Docs, err = core.ParseCounts("posts:likes,rank(likes);users:likes"); err != nil {
		t.Fatal(err)
	}
	deleted := func(before *eventarc.Doc) (eventHint, error) {
		e := eventarc.Written("demo", "(default)", before, nil)
		e.SetType(trigger.Deleted)
		e.SetTime(t2)
		return decoder{Layout: l}.Decode(e, received)
	}
	cell := func(n int64) *firestoredata.Value {
		return &firestoredata.Value{ValueType: &firestoredata.Value_IntegerValue{IntegerValue: n}}
	}
	post := &eventarc.Doc{Path: "posts/p1", Created: t1, Updated: t2, Fields: map[string]*firestoredata.Value{
		"likes": cell(3), core.FieldBookkeeping: {ValueType: &firestoredata.Value_MapValue{MapValue: &firestoredata.MapValue{
			Fields: map[string]*firestoredata.Value{rank.FieldRank: {ValueType: &firestoredata.Value_MapValue{MapValue: &firestoredata.MapValue{
				Fields: map[string]*firestoredata.Value{"likes": cell(42)}}}}}}}}}}
	got, err := deleted(post)
	if err != nil || got.Gone == nil || got.Counter != "posts/p1" || got.Life != l.LifeOf(t1) || recorded(got.Gone)["likes"] != int64(42) {
		t.Errorf("the deletion of a ranked post: %+v, %v", got, err)
	}
	if _, err := deleted(shard("users/u1", 1, t1)); !errors.Is(err, ErrForeign) {
		t.Errorf("the deletion of a document no board ranks: %v; want %v", err, ErrForeign)
	}
	e := eventarc.Written("demo", "(default)", nil, shard("posts/p1", 1, t1))
	e.SetType(trigger.Deleted)
	if _, err := (decoder{Layout: l}).Decode(e, received); !errors.Is(err, ErrMalformed) {
		t.Errorf("a deletion with no old document: %v; want %v", err, ErrMalformed)
	}
}

// TestDecodeChildEdit: an edit of a child that changes no field its
// aggregates read is acknowledged with no fold; one that changes a field
// summed or filtered on, or a create or delete, is folded.
func TestDecodeChildEdit(t *testing.T) {
	var l core.Layout
	var err error
	if l.Docs, err = core.ParseCounts("posts:comments=count(comments),shown=count(comments where hidden == false),score=sum(comments.stars)"); err != nil {
		t.Fatal(err)
	}
	const path = "posts/p1/comments/c1"
	doc := func(fields map[string]any, at time.Time) *eventarc.Doc {
		d := shard(path, 1, at)
		d.Fields = map[string]*firestoredata.Value{}
		for k, v := range fields {
			switch v := v.(type) {
			case bool:
				d.Fields[k] = &firestoredata.Value{ValueType: &firestoredata.Value_BooleanValue{BooleanValue: v}}
			case int:
				d.Fields[k] = &firestoredata.Value{ValueType: &firestoredata.Value_IntegerValue{IntegerValue: int64(v)}}
			case string:
				d.Fields[k] = &firestoredata.Value{ValueType: &firestoredata.Value_StringValue{StringValue: v}}
			}
		}
		return d
	}
	was := map[string]any{"text": "hi", "hidden": false, "stars": 4}
	for _, tc := range []struct {
		name          string
		before, after *eventarc.Doc
		unchanged     bool
	}{
		{"a new text, a stamp", doc(was, t1), doc(map[string]any{"text": "hello", "hidden": false, "stars": 4, "deletedAt": "x"}, t2), true},
		{"hidden", doc(was, t1), doc(map[string]any{"text": "hi", "hidden": true, "stars": 4}, t2), false},
		{"stars", doc(was, t1), doc(map[string]any{"text": "hi", "hidden": false, "stars": 5}, t2), false},
		{"stars taken away", doc(was, t1), doc(map[string]any{"text": "hi", "hidden": false}, t2), false},
		{"created", nil, doc(was, t1), false},
		{"deleted", doc(was, t1), nil, false},
	} {
		e := eventarc.Written("demo", "(default)", tc.before, tc.after)
		e.SetTime(t2)
		got, err := decoder{Layout: l}.Decode(e, received)
		if tc.unchanged != errors.Is(err, ErrUnchanged) || !tc.unchanged && (err != nil || got.Child == nil) {
			t.Errorf("%s: %+v, %v; want unchanged: %v", tc.name, got, err, tc.unchanged)
		}
	}
}
