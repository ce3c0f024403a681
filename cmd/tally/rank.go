package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/tallycounters/tally/counter"
	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/core/rank"
)

// rankCommand is tally rank: a document's place among its collection's,
// or with --value, where a value stands among them.
func rankCommand() *cobra.Command {
	args := exactArgs(2, "a document path (or with --value, a collection) and the field its collection is ranked by, declared rank(FIELD)")
	var value float64
	var fresh bool
	cmd := counterCommand("rank DOC FIELD", "Print a document's place among its collection's by a field declared rank(FIELD): two or three reads; "+
		"with --value, where a value stands among them (tally rank posts likes --value 1234): one read", args, func(cmd *cobra.Command) action {
		cmd.Flags().Float64Var(&value, "value", 0, "print where this value stands among the documents of the collection given instead of a document: its place and percentile, from one read")
		cmd.Flags().BoolVar(&fresh, "fresh", false, "read the place at a time after this command began: what the documents' folds had written by then (a read and a write more where the board was not folded since; up to a second's wait)")
		began := time.Now()
		return func(ctx context.Context, a *admin, c *counter.Client, id string) error {
			if cmd.Flags().Changed("value") {
				return standing(ctx, a, c, id, value)
			}
			if err := layoutOf(a.cfg).CheckName(id); err != nil {
				return usageError{err}
			}
			var after time.Time
			if fresh {
				after = began
			}
			p, err := c.RankAfter(ctx, id, a.field, after)
			if errors.Is(err, counter.ErrNotRanked) {
				return fmt.Errorf("%s is not ranked by %s yet: %w", id, a.field, err)
			}
			if errors.Is(err, core.ErrUndeclared) {
				return usageError{err}
			}
			if err != nil {
				return err
			}
			var value any = p.Value
			if p.Int != nil {
				value = *p.Int // exact past 2^53
			}
			a.print(map[string]any{"rank": p.Rank, "of": p.Of, "as_of": p.AsOf.UTC().Format(time.RFC3339Nano), "value": value, "reads": p.Reads},
				"%s #%d of %d by %s (%v; top %.3g%%) as of %s, %d reads", id, p.Rank, p.Of, a.field, value, p.Top(),
				p.AsOf.UTC().Format(time.RFC3339), p.Reads)
			return nil
		}
	})
	cmd.Annotations = map[string]string{ownNames: "a collection, with --value"}
	return cmd
}

// standing prints where value stands among collection's documents by
// a.field.
func standing(ctx context.Context, a *admin, c *counter.Client, collection string, value float64) error {
	s, err := c.Standing(ctx, collection, a.field, value)
	if errors.Is(err, core.ErrUndeclared) || errors.Is(err, rank.ErrNaN) {
		return usageError{err}
	}
	if err != nil {
		return err
	}
	place := fmt.Sprintf("#%d", s.Best)
	if !s.Exact() {
		place = fmt.Sprintf("#%d to #%d", s.Best, s.Worst)
	}
	a.print(map[string]any{"rank": s.Best, "rank_at_most": s.Worst, "of": s.Of, "top": s.Top(), "as_of": s.AsOf.UTC().Format(time.RFC3339Nano), "reads": s.Reads},
		"%s %v: top %.3g%%, %s of %d by %s, as of %s, %d read", collection, value, s.Top(), place, s.Of, a.field, s.AsOf.UTC().Format(time.RFC3339), s.Reads)
	return nil
}
