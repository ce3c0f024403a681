package counter

import (
	"context"

	"github.com/tallycounters/tally/internal/fold"
)

// readAndSum is fold's ReadAll of the counted documents names, a part's,
// bounded: its two calls take two of the Timeout, and more for more than
// a part's names.
func (c *Client) readAndSum(ctx context.Context, names []string) (map[string]*fold.Known, error) {
	ctx, cancel := c.bound(ctx, 2+2*len(names)/DefaultPartSize)
	defer cancel()
	return c.folder.ReadAll(ctx, names)
}
