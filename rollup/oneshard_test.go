package rollup

import (
	"reflect"
	"testing"
	"time"

	"github.com/googleapis/google-cloudevents-go/cloud/firestoredata"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/tools/eventarc"
)

// TestDecodeOneShard: a write to shard 0 tells the counts on it, and the
// parent's update time as Increment read it, if it carries one; a write to
// another shard, of a count that is no integer, or dated after its event
// came, tells only its time.
func TestDecodeOneShard(t *testing.T) {
	integer := func(n int64) *firestoredata.Value {
		return &firestoredata.Value{ValueType: &firestoredata.Value_IntegerValue{IntegerValue: n}}
	}
	seen := &firestoredata.Value{ValueType: &firestoredata.Value_TimestampValue{TimestampValue: timestamppb.New(t1)}}
	tallyMap := func(fields map[string]*firestoredata.Value) *firestoredata.Value {
		return &firestoredata.Value{ValueType: &firestoredata.Value_MapValue{MapValue: &firestoredata.MapValue{Fields: fields}}}
	}
	docs := core.Layout{}
	var err error
	if docs.Docs, err = core.ParseCounts("posts:likes,views,shares"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		layout core.Layout
		path   string
		fields map[string]*firestoredata.Value
		want   *core.OneShard
	}{
		{"guide layout", core.Default(), "counters/likes/shards/0",
			map[string]*firestoredata.Value{"count": integer(7), core.FieldParentSeen: seen},
			&core.OneShard{Seen: t1, Values: []int64{7}, Held: []bool{true}}},
		{"no parent version", core.Default(), "counters/likes/shards/0",
			map[string]*firestoredata.Value{"count": integer(7)}, &core.OneShard{Values: []int64{7}, Held: []bool{true}}},
		{"another shard", core.Default(), "counters/likes/shards/2",
			map[string]*firestoredata.Value{"count": integer(7), core.FieldParentSeen: seen}, nil},
		{"a count that is not an integer", core.Default(), "counters/likes/shards/0",
			map[string]*firestoredata.Value{"count": {ValueType: &firestoredata.Value_DoubleValue{DoubleValue: 7}}, core.FieldParentSeen: seen}, nil},
		{"no count", core.Default(), "counters/likes/shards/0",
			map[string]*firestoredata.Value{core.FieldParentSeen: seen}, nil},
		{"the version not a timestamp", core.Default(), "counters/likes/shards/0",
			map[string]*firestoredata.Value{"count": integer(7), core.FieldParentSeen: integer(1)}, &core.OneShard{Values: []int64{7}, Held: []bool{true}}},
		{"counts on documents, two of three held", docs, "posts/p1/lives/1732000000000000/shards/0",
			map[string]*firestoredata.Value{"likes": integer(3), "shares": integer(1),
				core.FieldBookkeeping: tallyMap(map[string]*firestoredata.Value{core.FieldParentSeen: seen})},
			&core.OneShard{Seen: t1, Values: []int64{3, 0, 1}, Held: []bool{true, false, true}}},
		{"counts on documents, the version at the top, where an app's field could be", docs, "posts/p1/lives/1732000000000000/shards/0",
			map[string]*firestoredata.Value{"likes": integer(3), core.FieldParentSeen: seen},
			&core.OneShard{Values: []int64{3, 0, 0}, Held: []bool{true, false, false}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := eventarc.Written("demo", "(default)", nil, &eventarc.Doc{Path: tc.path, Fields: tc.fields, Created: t2, Updated: t2})
			e.SetTime(t2)
			got, err := decoder{Layout: tc.layout}.Decode(e, received)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.One, tc.want) {
				t.Errorf("One = %+v, want %+v", got.One, tc.want)
			}
		})
	}
	t.Run("dated after it came", func(t *testing.T) {
		at := received.Add(time.Second) // within the skew the decoder allows
		e := eventarc.Written("demo", "(default)", nil, &eventarc.Doc{Path: "counters/likes/shards/0",
			Fields: map[string]*firestoredata.Value{"count": integer(7), core.FieldParentSeen: seen}, Created: at, Updated: at})
		e.SetTime(at)
		got, err := decoder{Layout: core.Default()}.Decode(e, received)
		if err != nil {
			t.Fatal(err)
		}
		if got.One != nil || !got.At.Equal(at) {
			t.Errorf("hint %v with counts %+v; want its time and no counts", got, got.One)
		}
	})
}
