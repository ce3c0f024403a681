package aggregate

import (
	"testing"
	"time"
)

func TestSplitsPartitionTheRange(t *testing.T) {
	for _, c := range []struct {
		lo, hi string
		n      int64
		want   int
	}{{"", "", 1001, 3}, {"", "", 100000, 200}, {"A", "B", 5000, 10}, {"A5", "A6", 1200, 3}, {"zzzzzzzzzy", "zzzzzzzzzz", 5000, 1}} {
		starts := splits(c.lo, c.hi, c.n)
		if starts[0] != c.lo || len(starts) != c.want {
			t.Errorf("splits(%q, %q, %d) = %d starts from %q; want %d from %q", c.lo, c.hi, c.n, len(starts), starts[0], c.want, c.lo)
			continue
		}
		for i := 1; i < len(starts); i++ {
			if starts[i] <= starts[i-1] || c.hi != "" && starts[i] >= c.hi {
				t.Errorf("splits(%q, %q) = %v: not increasing within the range", c.lo, c.hi, starts)
			}
		}
	}
}

func TestAggregateValuesOverParts(t *testing.T) {
	aggs := []Aggregate{{Field: "n", Op: OpCount, Child: "c"}, {Field: "s", Op: OpSum, Child: "c", Of: "x"},
		{Field: "a", Op: OpAvg, Child: "c", Of: "y"}, {Field: "e", Op: OpAvg, Child: "d", Of: "y"}}
	at := time.Now()
	parts := map[string]Parts{"c": {
		PartKey(""):  {At: at, V: map[string]any{"n": int64(2), "s": int64(3), "a": int64(8)}, C: map[string]int64{"a": 2}},
		PartKey("M"): {At: at, V: map[string]any{"n": int64(1), "s": 0.5, "a": int64(1)}, C: map[string]int64{"a": 1}},
	}}
	got := Values(aggs, parts)
	if got["n"] != int64(3) || got["s"] != 3.5 || got["a"] != 3.0 || got["e"] != nil {
		t.Errorf("= %v; want n 3, s 3.5, a 3, e nil", got)
	}
	if key, hi, _ := parts["c"].Of("Q"); key != PartKey("M") || hi != "" {
		t.Errorf("Of(Q) = %q, %q", key, hi)
	}
	if key, hi, _ := parts["c"].Of("B"); key != PartKey("") || hi != "M" {
		t.Errorf("Of(B) = %q, %q", key, hi)
	}
}
