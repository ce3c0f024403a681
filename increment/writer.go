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

// shardWriter adds to counters: a plain step with adder.Adder, the one
// write it costs; a vote or a step with an Idempotency-Key in one commit with its
// vote and its key's record (Commit).
type shardWriter struct {
	client *firestore.Client
	layout core.Layout
	shards *adder.Adder
}

// newShardWriter returns a shardWriter for counters in client's
// database; zero fields of cfg take the defaults.
func newShardWriter(client *firestore.Client, cfg adder.Config) *shardWriter {
	return &shardWriter{client: client, layout: cfg.Layout, shards: adder.New(client, cfg)}
}

// Add adds by to count c of counter id on a random shard: see adder.Adder.Add.
func (w *shardWriter) Add(ctx context.Context, id string, c core.Count, by int64) (shard int, committed time.Time, err error) {
	return w.shards.Add(ctx, id, c, by)
}
