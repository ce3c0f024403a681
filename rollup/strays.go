package rollup

import (
	"context"
	"errors"
	"time"

	"github.com/tallycounters/tally/internal/lives"
)

// moveStrays moves, for c's waiters whose shards are of an earlier life
// than the document's, what that life took after the document's began
// (package lives), and marks them moved: a fold then answers them as any
// other, and the move's own write brings one. An earlier life too old to
// tell apart is reported, and its waiters are answered as before: what
// it took is counted nowhere.
func (t *tracker) moveStrays(ctx context.Context, c *tracked) error {
	t.mu.Lock()
	latest := map[string]time.Time{}
	for _, w := range c.waiting {
		if c.stray(w) && !w.moved {
			latest[w.life] = maxTime(latest[w.life], w.at)
		}
	}
	t.mu.Unlock()
	for life, at := range latest {
		moved, err := t.store.MoveStrays(ctx, c.id, life, at)
		switch {
		case errors.Is(err, lives.ErrTooLate):
			t.log.Error("rollup: increments of an earlier life of the document, made after it was created again, are counted nowhere",
				"counter", c.id, "life", life, "error", err.Error())
		case err != nil:
			return err
		case len(moved) > 0:
			t.log.Info("rollup: moved increments made in an earlier life after the document was created again into its life",
				"counter", c.id, "from", life, "moved", moved)
		}
		t.mu.Lock()
		for _, w := range c.waiting {
			if w.life == life && !w.at.After(at) {
				w.moved = true
			}
		}
		t.mu.Unlock()
	}
	return nil
}
