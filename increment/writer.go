package increment

import (
	"context"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/increment/shard"
	"github.com/tallycounters/tally/layout"
)

// ErrNotFound is returned for a counter that does not exist when
// auto-create is off. It is layout.ErrNoCounter.
var ErrNotFound = layout.ErrNoCounter

// WriterConfig configures a Writer. Zero fields take the defaults.
type WriterConfig = shard.Config

// Writer adds to counters: a plain step with shard.Adder, the one write it
// costs; a vote or a step with an Idempotency-Key in one commit with its
// vote and its key's record (Commit).
type Writer struct {
	client *firestore.Client
	layout layout.Layout
	shards *shard.Adder
}

// NewWriter returns a Writer for counters in client's database.
func NewWriter(client *firestore.Client, cfg WriterConfig) *Writer {
	return &Writer{client: client, layout: cfg.Layout, shards: shard.New(client, cfg)}
}

// Add adds by to count c of counter id on a random shard: see shard.Adder.Add.
func (w *Writer) Add(ctx context.Context, id string, c layout.Count, by int64) (shard int, committed time.Time, err error) {
	return w.shards.Add(ctx, id, c, by)
}
