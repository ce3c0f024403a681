package aggregate

import (
	"math"
	"testing"
	"time"
)

func TestExtremesOverParts(t *testing.T) {
	aggs := []Aggregate{
		{Field: "best", Op: OpMax, Child: "games", Of: "points"},
		{Field: "worst", Op: OpMin, Child: "games", Of: "points"},
		{Field: "rankedBest", Op: OpMax, Child: "games", Of: "points", Where: []Filter{{Field: "ranked", Value: true}}},
	}
	fields := summedFields(aggs, "games")
	if len(fields) != 2 || fields[0] != "points" || fields[1] != "points where ranked == true" {
		t.Fatalf("recorded fields %q", fields)
	}
	at := time.Unix(1, 0)
	child := func(id string, points any, ranked bool) record {
		return recordOf(id, map[string]any{"points": points, "ranked": ranked}, recordings(fields), at)
	}
	big := int64(1<<53 + 1) // no double holds it
	parts := map[string]Parts{"games": {}}
	for i, recs := range [][]record{
		{child("a", int64(3), true), child("b", 2.5, false), child("c", "ten", true), child("d", math.NaN(), true)},
		{child("e", math.Inf(1), true), child("f", big, false), child("g", float64(1<<53), true), child("h", -7.25, true)},
		{child("i", nil, true)},
	} {
		part := Part{V: map[string]any{}, C: map[string]int64{}}
		addSums(&part, aggs, "games", fields, recs)
		back := PartsFrom(map[string]any{FieldParts: map[string]any{"games": map[string]any{PartKey(""): storedAt(part, i)}}})
		parts["games"][PartKey(string(rune('a'+i)))] = back["games"][PartKey("")]
	}
	got := Values(aggs, parts)
	if got["best"] != big || got["worst"] != -7.25 || got["rankedBest"] != float64(1<<53) {
		t.Errorf("best %v (%T), worst %v, ranked best %v (%T); want %d, -7.25, 2^53 as a double: "+
			"finite numbers only, an integer past 2^53 told from the double below it",
			got["best"], got["best"], got["worst"], got["rankedBest"], got["rankedBest"], big)
	}
	if v := Values(aggs, map[string]Parts{"games": {PartKey(""): {V: map[string]any{}}}}); v["best"] != nil || v["worst"] != nil {
		t.Errorf("over no numbers: %v; want nil, as an average's", v)
	}
}

func TestExtremeOfEqualValuesIsTheInteger(t *testing.T) {
	for _, order := range [][]Num{{{Kind: kindInt, I: 4}, {Kind: kindDouble, F: 4}}, {{Kind: kindDouble, F: 4}, {Kind: kindInt, I: 4}}} {
		for _, op := range []string{OpMax, OpMin} {
			var e extremum
			for _, v := range order {
				e.add(op, v)
			}
			if e.value() != int64(4) {
				t.Errorf("%s of %v = %v (%T); want the integer, whatever the order", op, order, e.value(), e.value())
			}
		}
	}
}

func TestParseExtremes(t *testing.T) {
	for in, want := range map[string]Aggregate{
		"best=max(games.points)":                     {Field: "best", Op: OpMax, Child: "games", Of: "points"},
		"worst=min(/games.points)":                   {Field: "worst", Op: OpMin, Child: "games", Root: true, Of: "points"},
		`top=max(games.points where ranked == true)`: {Field: "top", Op: OpMax, Child: "games", Of: "points", Where: []Filter{{Field: "ranked", Value: true}}},
		`s=sum(games.points where mode == "solo")`:   {Field: "s", Op: OpSum, Child: "games", Of: "points", Where: []Filter{{Field: "mode", Value: "solo"}}},
	} {
		a, err := Parse(in)
		if err != nil || a.String() != want.String() || a.Field != want.Field || a.Op != want.Op || a.Of != want.Of || a.Root != want.Root || len(a.Where) != len(want.Where) {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", in, a, err, want)
			continue
		}
		if again, err := Parse(a.String()); err != nil || again.String() != a.String() {
			t.Errorf("Parse(%q) does not read back: %v", a.String(), err)
		}
	}
}
