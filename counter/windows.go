package counter

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/tallycounters/tally/counting"
)

// MoveReport is what a run of the boundary job did.
type MoveReport struct {
	Due    int   `json:"due"`    // documents whose next_boundary had passed
	Moved  int   `json:"moved"`  // of them, folded at the boundary (the others were folded since it)
	Errors int   `json:"errors"` // of them, not moved: see the log
	TookMS int64 `json:"took_ms"`
}

// moveWorkers is how many documents the boundary job moves at once.
const moveWorkers = 32

// MoveWindows is the boundary job: it moves the windows of every counted
// document whose next_boundary is at or before now to the start of its
// current bucket (counting.Folder.FoldAtBoundary), moveWorkers at a time,
// and calls report for each it could not move.
func (c *Client) MoveWindows(ctx context.Context, now time.Time, report func(id string, err error)) (MoveReport, error) {
	began := time.Now()
	due, err := c.folder.Due(ctx, now)
	if err != nil {
		return MoveReport{}, fmt.Errorf("counter: %w", err)
	}
	rep := MoveReport{Due: len(due)}
	var mu sync.Mutex
	jobs := make(chan string)
	var wg sync.WaitGroup
	for range min(moveWorkers, len(due)) {
		wg.Go(func() {
			for id := range jobs {
				fctx, cancel := c.boundFold(ctx)
				fold, err := c.folder.FoldAtBoundary(fctx, id, now)
				cancel()
				mu.Lock()
				switch {
				case err != nil:
					rep.Errors++
					if report != nil {
						report(id, err)
					}
				case fold.Wrote:
					rep.Moved++
				}
				mu.Unlock()
			}
		})
	}
	for _, id := range due {
		select {
		case jobs <- id:
		case <-ctx.Done():
		}
	}
	close(jobs)
	wg.Wait()
	rep.TookMS = time.Since(began).Milliseconds()
	return rep, ctx.Err()
}

// Unit is the shortest unit of the windows declared, whose every start of
// a bucket the boundary job runs at: "" if none is declared.
func (c *Client) Unit() counting.Unit { return c.layout.SmallestUnit() }
