package extension

import (
	"testing"
	"time"

	"github.com/tallycounters/tally/internal/core"
)

// TestMoveKeepsToTheSpacing: a move waits until a spacing has passed
// since tally last wrote the document, as the move read it (its own
// bookkeeping, or the document's update time where that is the write's
// own commit), measured on the server's clock, from the read; with no
// spacing, or no write of tally's yet, it waits for nothing. On a
// document tally also folds, a move after a move waits two spacings, so
// that the fold has every other turn.
func TestMoveKeepsToTheSpacing(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	byMove := map[string]any{core.FieldWritten: t0, FieldMovedAt: t0}
	byFold := map[string]any{core.FieldWritten: t0, FieldMovedAt: t0.Add(-time.Second)}
	for _, c := range []struct {
		name          string
		spacing       time.Duration
		book          map[string]any
		counted       bool
		written, read time.Time
		want          time.Duration
	}{
		{"read at once after a write", time.Second, nil, false, t0, t0.Add(10 * time.Millisecond), 990 * time.Millisecond},
		{"read a spacing after", time.Second, nil, false, t0, t0.Add(time.Second), 0},
		{"read long after", time.Second, nil, false, t0, t0.Add(time.Hour), -time.Hour + time.Second},
		{"never written", time.Second, nil, false, time.Time{}, t0, 0},
		{"no spacing", 0, nil, false, t0, t0, 0},
		{"a counted document, moved last", time.Second, byMove, true, t0, t0.Add(time.Second), time.Second},
		{"a counted document, folded last", time.Second, byFold, true, t0, t0.Add(time.Second), 0},
		{"a document of no count, moved last", time.Second, byMove, false, t0, t0.Add(time.Second), 0},
	} {
		m := &Mover{o: MoverOptions{Spacing: c.spacing}}
		if got := m.wait(c.book, c.written, c.read, c.counted); got != c.want && !(c.want <= 0 && got <= 0) {
			t.Errorf("%s: wait %v; want %v", c.name, got, c.want)
		}
	}
}
