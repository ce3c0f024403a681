package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tallycounters/tally/counter"
	"github.com/tallycounters/tally/increment"
	"github.com/tallycounters/tally/internal/core"
)

// boardCommand is tally board: a page of a collection's documents by a
// field declared rank(FIELD).
func boardCommand() *cobra.Command {
	args := exactArgs(2, "a collection and the field it is ranked by, declared rank(FIELD)")
	var offset, limit int
	cmd := counterCommand("board COLLECTION FIELD", "Print the documents at places OFFSET+1 to OFFSET+LIMIT of a collection by a field declared rank(FIELD), "+
		"with their places, exact at one read time: the summary, then the page's documents and those of its range of values above it, a read each", args,
		func(cmd *cobra.Command) action {
			cmd.Flags().IntVar(&offset, "offset", 0, "how many places to pass over, from the first")
			cmd.Flags().IntVar(&limit, "limit", increment.DefaultPage, fmt.Sprintf("how many documents to print, 1 to %d", counter.MaxPage))
			return func(ctx context.Context, a *admin, c *counter.Client, collection string) error {
				p, err := c.Board(ctx, collection, a.field, offset, limit)
				if errors.Is(err, core.ErrUndeclared) || errors.Is(err, counter.ErrPage) {
					return usageError{err}
				}
				if err != nil {
					return err
				}
				printPage(a, collection, p)
				return nil
			}
		})
	cmd.Annotations = map[string]string{ownNames: "a collection"}
	return cmd
}

// printPage prints p: a line for each document, then the board's size,
// as of when, and the reads; with --json, as Increment answers GET
// ?board=.
func printPage(a *admin, collection string, p counter.Page) {
	out := increment.BoardResponse{Documents: make([]increment.BoardEntry, len(p.Documents)), Of: p.Of,
		AsOf: p.AsOf.UTC().Format(time.RFC3339Nano), Reads: p.Reads}
	var lines []string
	for i, d := range p.Documents {
		v := increment.RankedOf(d.Value)
		out.Documents[i] = increment.BoardEntry{Document: d.Document, Value: v, Rank: d.Rank}
		shown, _ := v.MarshalJSON()
		lines = append(lines, fmt.Sprintf("#%d %s %s", d.Rank, d.Document, shown))
	}
	lines = append(lines, fmt.Sprintf("%d of %d documents of %s by %s, as of %s, %d reads", len(p.Documents), p.Of, collection, a.field,
		p.AsOf.UTC().Format(time.RFC3339), p.Reads))
	a.print(out, "%s", strings.Join(lines, "\n"))
}
