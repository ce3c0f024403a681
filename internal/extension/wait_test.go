package extension

import (
	"testing"
	"time"
)

// TestMoveKeepsToTheSpacing: a move waits until a spacing has passed
// since tally last wrote the document, as the move read it (its own
// bookkeeping, or the document's update time where that is the write's
// own commit), measured on the server's clock, from the read; with no
// spacing, or no write of tally's yet, it waits for nothing.
func TestMoveKeepsToTheSpacing(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	m := &Mover{spacing: time.Second}
	for _, c := range []struct {
		name          string
		spacing       time.Duration
		written, read time.Time
		want          time.Duration
	}{
		{"read at once after a write", time.Second, t0, t0.Add(10 * time.Millisecond), 990 * time.Millisecond},
		{"read a spacing after", time.Second, t0, t0.Add(time.Second), 0},
		{"read long after", time.Second, t0, t0.Add(time.Hour), -time.Hour + time.Second},
		{"never written", time.Second, time.Time{}, t0, 0},
		{"no spacing", 0, t0, t0, 0},
	} {
		m.spacing = c.spacing
		if got := m.wait(c.written, c.read); got != c.want && !(c.want <= 0 && got <= 0) {
			t.Errorf("%s: wait %v; want %v", c.name, got, c.want)
		}
	}
}
