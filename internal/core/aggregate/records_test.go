package aggregate

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// TestRecordsRoundTrip: records of any ids and values read back as
// written; damaged bytes are refused, never misread.
func TestRecordsRoundTrip(t *testing.T) {
	at := time.Date(2026, 11, 25, 12, 0, 0, 123000, time.UTC)
	recs := []record{
		{ID: "%41", At: at, Vals: []Num{{Kind: kindInt, I: math.MinInt64}, {}}},
		{ID: "a b", At: at, Vals: []Num{{Kind: kindDouble, F: math.NaN()}, {Kind: kindDouble, F: math.Inf(-1)}}},
		{ID: "alice@example.com", At: at.Add(time.Second), Vals: []Num{{Kind: kindInt, I: math.MaxInt64}, {Kind: kindDouble, F: 2.5}}},
		{ID: "caf\u00e9", At: at, Vals: []Num{{}, {Kind: kindInt, I: -3}}},
		{ID: strings.Repeat("z", 1500), At: at, Vals: []Num{{Kind: kindInt}, {}}},
	}
	raw := encodeRecords(recs)
	got, err := decodeRecords(raw, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(recs) {
		t.Fatalf("%d records, want %d", len(got), len(recs))
	}
	for i, r := range got {
		w := recs[i]
		if r.ID != w.ID || !r.At.Equal(w.At) || len(r.Vals) != 2 {
			t.Errorf("record %d = %+v, want %+v", i, r, w)
		}
		for j, v := range r.Vals {
			if v.Kind != w.Vals[j].Kind || v.I != w.Vals[j].I || math.Float64bits(v.F) != math.Float64bits(w.Vals[j].F) {
				t.Errorf("record %d value %d = %+v, want %+v", i, j, v, w.Vals[j])
			}
		}
	}
	for _, bad := range [][]byte{nil, {9}, raw[:len(raw)-3], append(slices.Clone(raw), 0x80)} {
		if _, err := decodeRecords(bad, 2); err == nil {
			t.Errorf("decodeRecords(% x...) took damaged bytes", bad[:min(len(bad), 8)])
		}
	}
}

// TestTotalsAsFirestoreSums: a sum of parts is Firestore's sum() over all
// their children: an integer while every value is one and the sum fits
// int64, even when a part's own sum did not; else a double; NaN with a
// NaN; the infinities as IEEE 754 adds them; an average a double, nil over
// no numbers.
func TestTotalsAsFirestoreSums(t *testing.T) {
	ints := func(vs ...int64) []Num {
		var out []Num
		for _, v := range vs {
			out = append(out, Num{Kind: kindInt, I: v})
		}
		return out
	}
	dbl := func(f float64) Num { return Num{Kind: kindDouble, F: f} }
	for _, c := range []struct {
		name     string
		parts    [][]Num
		sum, avg any
	}{
		{"none", [][]Num{nil, nil}, int64(0), nil},
		{"integers", [][]Num{ints(1, 2), ints(3)}, int64(6), 2.0},
		{"past int64 in a part, back within it", [][]Num{ints(math.MaxInt64, 5), ints(-10)}, int64(math.MaxInt64 - 5), float64(math.MaxInt64-5) / 3},
		{"past int64", [][]Num{ints(math.MaxInt64), ints(1)}, float64(math.MaxInt64) + 1, (float64(math.MaxInt64) + 1) / 2},
		{"below int64", [][]Num{ints(math.MinInt64), ints(-1)}, float64(math.MinInt64) - 1, (float64(math.MinInt64) - 1) / 2},
		{"a double", [][]Num{ints(1), {dbl(0.5)}}, 1.5, 0.75},
		{"not numbers", [][]Num{{{}, {}}, ints(4)}, int64(4), 4.0},
		{"NaN", [][]Num{ints(1), {dbl(math.NaN())}}, math.NaN(), math.NaN()},
		{"infinity", [][]Num{ints(1), {dbl(math.Inf(1))}}, math.Inf(1), math.Inf(1)},
		{"both infinities", [][]Num{{dbl(math.Inf(1))}, {dbl(math.Inf(-1))}}, math.NaN(), math.NaN()},
	} {
		t.Run(c.name, func(t *testing.T) {
			parts := Parts{}
			for i, vs := range c.parts {
				part := Part{V: map[string]any{}, C: map[string]int64{}}
				var recs []record
				for _, v := range vs {
					recs = append(recs, record{Vals: []Num{v}})
				}
				addSums(&part, []Aggregate{{Field: "s", Op: OpSum, Child: "c", Of: "x"}, {Field: "a", Op: OpAvg, Child: "c", Of: "x"}}, "c", []string{"x"}, recs)
				// As the counted document keeps it, and reads it back.
				back := PartsFrom(map[string]any{FieldParts: map[string]any{"c": map[string]any{PartKey(""): storedAt(part, i)}}})
				parts[PartKey(string(rune('a'+i)))] = back["c"][PartKey("")]
			}
			got := Values([]Aggregate{{Field: "s", Op: OpSum, Child: "c", Of: "x"}, {Field: "a", Op: OpAvg, Child: "c", Of: "x"}}, map[string]Parts{"c": parts})
			if !sameValue(got["s"], c.sum) || !sameValue(got["a"], c.avg) {
				t.Errorf("sum %v (%T), avg %v; want %v (%T), %v", got["s"], got["s"], got["a"], c.sum, c.sum, c.avg)
			}
		})
	}
}

// storedAt is part as _tally.parts stores it, as read back by Firestore's
// client (an int64 stays one; a map is a map[string]any).
func storedAt(part Part, i int) map[string]any {
	part.At = time.Unix(int64(i), 0)
	m := part.Stored()
	v := map[string]any{}
	for k, x := range part.V {
		v[k] = x
	}
	m["v"] = v
	c := map[string]any{}
	for k, x := range part.C {
		c[k] = x
	}
	m["c"] = c
	if len(part.X) > 0 {
		x := map[string]any{}
		for k, e := range part.X {
			x[k] = e
		}
		m["x"] = x
	}
	return m
}

// sameValue compares aggregate values, NaN equal to NaN.
func sameValue(a, b any) bool {
	fa, aok := a.(float64)
	fb, bok := b.(float64)
	if aok && bok {
		return fa == fb || math.IsNaN(fa) && math.IsNaN(fb) || math.Abs(fa-fb) <= 1e-12*math.Abs(fb)
	}
	return a == b
}

// TestCut: a part's records are cut into parts of about as many children
// each, at the shortest prefix of an id that lies between two children,
// whatever the ids; where no prefix short enough does, the part stays
// bigger rather than cut at a key too long for a field name.
func TestCut(t *testing.T) {
	var recs []record
	alpha := []rune("0Az\u00e9\u65e5\U0001F600@ :+%")
	for range 1501 {
		id := make([]rune, 6)
		for i := range id {
			id[i] = alpha[rand.IntN(len(alpha))]
		}
		recs = append(recs, record{ID: "same-prefix-" + string(id)})
	}
	slices.SortFunc(recs, func(a, b record) int { return strings.Compare(a.ID, b.ID) })
	recs = slices.CompactFunc(recs, func(a, b record) bool { return a.ID == b.ID })
	chunks := cut("", recs)
	if want := (len(recs) + PartMax/2 - 1) / (PartMax / 2); len(chunks) != want {
		t.Errorf("%d records cut into %d parts, want %d", len(recs), len(chunks), want)
	}
	for i, c := range chunks {
		if n := len(c.recs); n < PartMax/4 || n > PartMax/2 {
			t.Errorf("part %d holds %d", i, n)
		}
		if i > 0 && (c.lo <= chunks[i-1].recs[len(chunks[i-1].recs)-1].ID || c.lo > c.recs[0].ID) {
			t.Errorf("part %d starts at %q, not between %q and %q", i, c.lo, chunks[i-1].recs[len(chunks[i-1].recs)-1].ID, c.recs[0].ID)
		}
		if i > 0 && !documentID(c.lo) {
			t.Errorf("part %d starts at %q: not a document id", i, c.lo)
		}
	}
	long := strings.Repeat("x", maxKeyBytes+10)
	if _, ok := separator(long+"a", long+"b"); ok {
		t.Error("a key past maxKeyBytes was taken")
	}
	if s, ok := separator("ab", "b"); !ok || s != "b" {
		t.Errorf("separator(ab, b) = %q, %v", s, ok)
	}
	if s, ok := separator("\u00e9a", "\u00e9b"); !ok || s != "\u00e9b" {
		t.Errorf("separator cut a character: %q, %v", s, ok)
	}
}

// TestMatches: a count's filters as Firestore's equality takes them.
func TestMatches(t *testing.T) {
	data := map[string]any{"hidden": false, "n": 3.0, "m": int64(3), "lang": "en", "z": nil}
	for _, c := range []struct {
		where []Filter
		want  bool
	}{
		{nil, true},
		{[]Filter{{"hidden", false}}, true},
		{[]Filter{{"hidden", true}}, false},
		{[]Filter{{"n", int64(3)}}, true},
		{[]Filter{{"m", int64(3)}, {"lang", "en"}}, true},
		{[]Filter{{"lang", "fr"}}, false},
		{[]Filter{{"missing", false}}, false},
		{[]Filter{{"z", false}}, false},
		{[]Filter{{"lang", int64(0)}}, false},
	} {
		if got := matches(data, c.where); got != c.want {
			t.Errorf("matches(%v) = %v", c.where, got)
		}
	}
}

// documentID reports whether s may be a Firestore document id, as a
// part's start may have to be: 1 to 1,500 bytes of UTF-8, no '/', not "."
// or "..", and not of the form __name__.
func documentID(s string) bool {
	reserved := len(s) >= 4 && strings.HasPrefix(s, "__") && strings.HasSuffix(s, "__")
	return s != "" && len(s) <= 1500 && utf8.ValidString(s) && !strings.Contains(s, "/") && s != "." && s != ".." && !reserved
}

func TestFilteredSumsRecordWhatPasses(t *testing.T) {
	a, err := Parse(`solo=sum(games.points where mode == "solo" and ranked == true)`)
	if err != nil || a.String() != `solo=sum(games.points where mode == "solo" and ranked == true)` {
		t.Fatalf("Parse = %+v (%s), %v", a, a, err)
	}
	aggs := []Aggregate{a, {Field: "all", Op: OpSum, Child: "games", Of: "points"}}
	fields := summedFields(aggs, "games")
	at := time.Unix(1, 0)
	var recs []record
	for i, g := range []map[string]any{
		{"points": int64(5), "mode": "solo", "ranked": true},
		{"points": int64(7), "mode": "duo", "ranked": true},
		{"points": int64(11), "mode": "solo", "ranked": false},
		{"points": 2.5, "mode": "solo", "ranked": true},
	} {
		recs = append(recs, recordOf(string(rune('a'+i)), g, recordings(fields), at))
	}
	part := Part{V: map[string]any{}, C: map[string]int64{}}
	addSums(&part, aggs, "games", fields, recs)
	if part.V["solo"] != 7.5 || part.C["solo"] != 2 || part.V["all"] != 25.5 {
		t.Errorf("solo %v over %d, all %v; want 7.5 over the 2 games that pass both filters, 25.5 over all", part.V["solo"], part.C["solo"], part.V["all"])
	}
}
