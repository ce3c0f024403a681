package rank

import (
	"testing"
	"time"

	"cloud.google.com/go/firestore"
)

// TestPlan: a write makes a move only where its document's cell changes,
// or where it holds a value no cell records yet; and records its cell.
func TestPlan(t *testing.T) {
	b := NewBoard("posts", "likes", firestore.FieldPath{"_tally"}, false, true)
	cell := func(v float64) int64 { return b.Grid.Cell(v) }
	write := func(v any) []firestore.Update {
		return []firestore.Update{{FieldPath: firestore.FieldPath{"likes"}, Value: v}}
	}
	for _, c := range []struct {
		name     string
		recorded map[string]any
		values   map[string]any
		updates  []firestore.Update
		from, to any // nil: none; "" for no move at all
	}{
		{"a first value", nil, nil, write(int64(0)), nil, cell(0)},
		{"a value in another cell", map[string]any{"likes": cell(3)}, nil, write(int64(4)), cell(3), cell(4)},
		{"a value in the same cell", map[string]any{"likes": cell(1000)}, nil, write(int64(1001)), "", ""},
		{"a value the app gave, not written", nil, map[string]any{"likes": int64(7)}, nil, nil, cell(7)},
		{"on the board already, not written", map[string]any{"likes": cell(7)}, map[string]any{"likes": int64(7)}, nil, "", ""},
		{"a value no board ranks", map[string]any{"likes": cell(2)}, nil, write("many"), cell(2), nil},
		{"nothing, and nothing recorded", nil, nil, nil, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			moves, record := Plan([]Board{b}, "posts/p1", c.recorded, c.values, c.updates, Key("1", time.Time{}))
			if c.to == "" {
				if len(moves) != 0 || len(record) != 0 {
					t.Fatalf("moves %+v, record %+v; want none", moves, record)
				}
				return
			}
			if len(moves) != 1 || len(record) != 1 {
				t.Fatalf("moves %+v, record %+v; want one each", moves, record)
			}
			m := moves[0]
			if !same(m.From, c.from) || !same(m.To, c.to) {
				t.Errorf("move from %v to %v; want from %v to %v", deref(m.From), deref(m.To), c.from, c.to)
			}
			if want := m.Recorded(); record[0].Value != want {
				t.Errorf("records %v; want %v", record[0].Value, want)
			}
		})
	}
}

func same(p *int64, want any) bool {
	if want == nil {
		return p == nil
	}
	return p != nil && *p == want.(int64)
}

func deref(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestSummaryApply: a summary adds moves up, cell by cell, and drops a
// cell emptied.
func TestSummaryApply(t *testing.T) {
	s := Summary{Cells: map[int64]int64{1: 2, 5: 1}, Of: 3}
	s.apply(map[string]any{fieldFrom: int64(5), fieldTo: int64(9)})
	s.apply(map[string]any{fieldTo: int64(1)})
	s.apply(map[string]any{fieldFrom: int64(1)})
	if s.Of != 3 || s.Cells[1] != 2 || s.Cells[9] != 1 || len(s.Cells) != 2 {
		t.Errorf("summary %+v; want of 3, cells 1: 2 and 9: 1", s)
	}
	if s.Above(1) != 1 || s.Above(9) != 0 || s.Above(-5) != 3 {
		t.Errorf("Above = %d, %d, %d; want 1, 0, 3", s.Above(1), s.Above(9), s.Above(-5))
	}
}
