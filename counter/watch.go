package counter

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"time"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/listen"
)

// Watch streams the count field of id (field "" is the guide layout's
// total; an aggregate or a window too) from a realtime listener on its
// document: the current value first, then each change. A missing counter
// reads as 0, or, in the guide layout, as its shards' sum where it has
// shards and no parent yet. It ends when ctx does (without an error) or
// when the listener fails for good; a stream the server ends, or that
// stalls, is opened again (a minute of silence costs one read, to tell a
// stall from a counter that did not change). With a Timeout, it also ends when the first value takes longer
// than that.
//
//	for total, err := range c.Watch(ctx, "likes", "") { ... }
func (c *Client) Watch(ctx context.Context, id, field string) iter.Seq2[int64, error] {
	return func(yield func(int64, error) bool) {
		k := core.Count{Field: field}
		switch c.layout.Kept(id, field) {
		case core.KeptAggregate, core.KeptWindow:
		case core.KeptTrend:
			yield(0, fmt.Errorf("counter: %s of %s is a trend, whose score changes by the moment: Value reads it now", field, id))
			return
		default:
			var err error
			if k, err = c.layout.Check(id, field); err != nil {
				yield(0, fmt.Errorf("counter: %w", err))
				return
			}
		}
		lctx, cancel := context.WithCancelCause(ctx)
		defer cancel(nil)
		silent := fmt.Errorf("counter: watch %s: no answer within %v: %w", id, c.timeout, context.DeadlineExceeded)
		answered := func() {}
		if c.timeout > 0 {
			t := time.AfterFunc(c.timeout, func() { cancel(silent) })
			defer t.Stop()
			answered = func() { t.Stop() }
		}
		last := int64(-1)
		first := true
		for snap, err := range listen.Snapshots(lctx, c.layout.Counter(c.fs, id)) {
			if err != nil {
				yield(0, fmt.Errorf("counter: watch %s: %w", id, err))
				return
			}
			answered()
			var total int64
			switch {
			case snap.Exists():
				total, _ = snap.Data()[k.Field].(int64)
			case !c.layout.OnDocs():
				// No parent yet: its shards' sum, if it has shards (as
				// Google's samples make them), until a fold makes it.
				if total, err = c.Sum(lctx, id, ""); errors.Is(err, ErrNotFound) {
					total, err = 0, nil
				}
				if err != nil {
					yield(0, fmt.Errorf("counter: watch %s: %w", id, err))
					return
				}
			}
			if total == last && !first {
				continue // another field changed
			}
			first, last = false, total
			if !yield(total, nil) {
				return
			}
		}
		if errors.Is(context.Cause(lctx), silent) && ctx.Err() == nil {
			yield(0, silent)
		}
	}
}
