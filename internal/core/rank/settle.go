package rank

import (
	"context"
	"errors"
	"time"

	"cloud.google.com/go/firestore"
)

// Settle folds b's summary until it is as of after or later, and answers
// it: a caller that made a move committed at after knows the summary
// holds it then. Several may settle one board at once; one folds, the
// others find its fold. It waits out the spacing, and the age a move must
// have before a fold takes it, and ends when ctx does.
func Settle(ctx context.Context, c *firestore.Client, b Board, after time.Time) (Summary, error) {
	for {
		s, err := ReadSummary(ctx, c, b)
		if err != nil || !s.AsOf.Before(after) {
			return s, err
		}
		next, err := Fold(ctx, c, b, s)
		switch {
		case errors.Is(err, errStale):
			continue
		case errors.Is(err, ErrTooSoon):
			err = sleep(ctx, s.Written.Add(Spacing).Sub(s.Read))
		case err != nil:
			return s, err
		case next.AsOf.Before(after):
			// the moves until after are not a spacing old yet
			err = sleep(ctx, after.Add(Spacing).Sub(s.Read))
		default:
			return next, nil
		}
		if err != nil {
			return s, err
		}
	}
}

// sleep waits d and a little more, or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(max(d, 0) + 20*time.Millisecond)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// SettleNow settles b up to the server's time now: its summary then holds
// every move made before the call.
func SettleNow(ctx context.Context, c *firestore.Client, b Board) (Summary, error) {
	s, err := ReadSummary(ctx, c, b)
	if err != nil {
		return s, err
	}
	return Settle(ctx, c, b, s.Read)
}
