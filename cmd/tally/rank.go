package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/tallycounters/tally/counter"
	"github.com/tallycounters/tally/internal/core"
)

// rankCommand is tally rank: a document's place among its collection's.
func rankCommand() *cobra.Command {
	args := exactArgs(2, "a document path and the field its collection is ranked by, declared rank(FIELD)")
	return counterCommand("rank DOC FIELD", "Print a document's place among its collection's by a field declared rank(FIELD): at most three reads", args, func(*cobra.Command) action {
		return func(ctx context.Context, a *admin, c *counter.Client, id string) error {
			p, err := c.Rank(ctx, id, a.field)
			if errors.Is(err, counter.ErrNotRanked) {
				return fmt.Errorf("%s is not ranked by %s yet: %w", id, a.field, err)
			}
			if errors.Is(err, core.ErrUndeclared) {
				return usageError{err}
			}
			if err != nil {
				return err
			}
			a.print(map[string]any{"rank": p.Rank, "of": p.Of, "as_of": p.AsOf.UTC().Format(time.RFC3339Nano), "reads": p.Reads},
				"%s #%d of %d by %s (%v; top %.3g%%) as of %s, %d reads", id, p.Rank, p.Of, a.field, p.Value, p.Top(),
				p.AsOf.UTC().Format(time.RFC3339), p.Reads)
			return nil
		}
	})
}
