package rollup

import (
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/layout"
	"github.com/tallycounters/tally/rollup/fold"
)

// What folds are, from package fold, which the Go client uses without
// the event handling of this package.
type (
	Folder = fold.Folder
	Sum    = fold.Sum
	Fold   = fold.Fold
	Drift  = fold.Drift
)

// The errors of a fold.
var (
	ErrNoCounter     = fold.ErrNoCounter
	ErrSumNotInteger = fold.ErrSumNotInteger
	ErrNoShardField  = fold.ErrNoShardField
)

// NewFolder returns a Folder for counters in client's database, writing each
// parent at most once per window.
func NewFolder(client *firestore.Client, l layout.Layout, window time.Duration) *Folder {
	return fold.NewFolder(client, l, window)
}

func precise(t time.Time) time.Time { return fold.Precise(t) }
