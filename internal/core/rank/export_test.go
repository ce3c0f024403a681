package rank

import (
	"context"
	"time"

	"cloud.google.com/go/firestore"
)

// Refresh is refresh, for a test to hand it a summary another reader has
// folded since it was read.
func Refresh(ctx context.Context, c *firestore.Client, b Board, s Summary, after time.Time) (Summary, int, error) {
	return refresh(ctx, c, b, s, after)
}
