package rollup

import (
	"math"
	"slices"
	"testing"

	"github.com/googleapis/google-cloudevents-go/cloud/firestoredata"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/tools/eventarc"
)

// TestDecodeChildLeftOut: a child's write whose compared field holds no
// finite number says which greatest and least leave it out (for a log
// line); a number, no field at all, or a deletion says none.
func TestDecodeChildLeftOut(t *testing.T) {
	var l core.Layout
	var err error
	if l.Docs, err = core.ParseCounts("players:best=max(games.points),worst=min(games.points),total=sum(games.points)"); err != nil {
		t.Fatal(err)
	}
	game := func(v *firestoredata.Value) *eventarc.Doc {
		d := shard("players/p1/games/g1", 1, t1)
		d.Fields = map[string]*firestoredata.Value{}
		if v != nil {
			d.Fields["points"] = v
		}
		return d
	}
	double := func(f float64) *firestoredata.Value {
		return &firestoredata.Value{ValueType: &firestoredata.Value_DoubleValue{DoubleValue: f}}
	}
	for _, tc := range []struct {
		name   string
		before *eventarc.Doc
		after  *eventarc.Doc
		want   []string
	}{
		{"a string", nil, game(&firestoredata.Value{ValueType: &firestoredata.Value_StringValue{StringValue: "lost"}}), []string{"best", "worst"}},
		{"NaN", nil, game(double(math.NaN())), []string{"best", "worst"}},
		{"an infinity", nil, game(double(math.Inf(-1))), []string{"best", "worst"}},
		{"null", nil, game(&firestoredata.Value{ValueType: &firestoredata.Value_NullValue{}}), []string{"best", "worst"}},
		{"a double", nil, game(double(2.5)), nil},
		{"an integer", nil, game(&firestoredata.Value{ValueType: &firestoredata.Value_IntegerValue{IntegerValue: 7}}), nil},
		{"no points", nil, game(nil), nil},
		{"deleted", game(double(math.NaN())), nil, nil},
	} {
		e := eventarc.Written("demo", "(default)", tc.before, tc.after)
		e.SetTime(t1)
		got, err := decoder{Layout: l}.Decode(e, received)
		if err != nil || got.Child == nil || !slices.Equal(got.LeftOut, tc.want) {
			t.Errorf("%s: left out of %v (%+v, %v); want %v", tc.name, got.LeftOut, got, err, tc.want)
		}
	}
}
