package increment

import (
	"context"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/internal/adder"
	"github.com/tallycounters/tally/internal/core"
)

// ErrNotFound is returned for a counter that does not exist when
// auto-create is off. It is core.ErrNoCounter.
var ErrNotFound = core.ErrNoCounter

// WriterConfig configures a Writer. Zero fields take the defaults.
type WriterConfig = adder.Config

// Writer adds to counters: a plain step with adder.Adder, the one write it
// costs; a vote or a step with an Idempotency-Key in one commit with its
// vote and its key's record (Commit).
type Writer struct {
	client *firestore.Client
	layout core.Layout
	shards *adder.Adder
}

// NewWriter returns a Writer for counters in client's database.
func NewWriter(client *firestore.Client, cfg WriterConfig) *Writer {
	return &Writer{client: client, layout: cfg.Layout, shards: adder.New(client, cfg)}
}

// Add adds by to count c of counter id on a random shard: see adder.Adder.Add.
func (w *Writer) Add(ctx context.Context, id string, c core.Count, by int64) (shard int, committed time.Time, err error) {
	return w.shards.Add(ctx, id, c, by)
}
