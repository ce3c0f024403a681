package rollup

import "github.com/tallycounters/tally/internal/core"

// Whether other instances fold the counters this one folds decides two
// things: whether a fold may trust a view of the parent older than a
// window (trustOldViews), and whether a fold long after a write may take
// its event's counts (sharing, in eventSum). Each is a moving share of
// what this instance's own reads and writes found.

// noteView records whether a fold on a view of the parent older than a
// fold spacing found it stale. Where that is usual (several instances share the
// counters), such folds read the parent first; where it is rare (one
// instance), they save that read. t.mu is held.
func (t *tracker) noteView(stale bool) {
	t.staleViews = moving(t.staleViews, stale)
}

// trustOldViews reports whether folds on views older than a window mostly
// find them current. t.mu is held.
func (t *tracker) trustOldViews() bool { return t.staleViews < 0.5 }

// noteRead records, for a read p of c's parent, whether another writer
// wrote it since this instance last did, if it ever did. Where that is
// usual, other instances fold the same counters: they hold events for
// them too. t.mu is held.
func (t *tracker) noteRead(c *tracked, p core.Parent) {
	if c.mine.IsZero() || !p.Exists || p.Written.Before(c.mine) {
		return
	}
	t.noteShared(p.Written.After(c.mine))
}

// noteShared records whether another writer wrote a parent since this
// instance last did. t.mu is held.
func (t *tracker) noteShared(other bool) {
	t.shared = moving(t.shared, other)
}

// sharing reports whether other instances mostly fold the counters this
// one folds too. t.mu is held.
func (t *tracker) sharing() bool { return t.shared >= 0.5 }

// moving is the share avg after one more observation, x, with the last
// ten or so observations weighing most.
func moving(avg float64, x bool) float64 {
	if x {
		return 0.9*avg + 0.1
	}
	return 0.9 * avg
}
