package increment

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"regexp"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/layout"
)

// ErrNotFound is returned for a counter that does not exist when
// auto-create is off. It is layout.ErrNoCounter.
var ErrNotFound = layout.ErrNoCounter

// WriterConfig configures a Writer. Zero fields take the defaults.
type WriterConfig struct {
	Layout        layout.Layout
	DefaultShards int            // shards of an auto-created counter; default 10
	AutoCreate    bool           // create any missing counter instead of ErrNotFound
	CreatePattern *regexp.Regexp // else create those whose whole id matches
	CacheTTL      time.Duration  // how long num_shards is cached; default 10s
}

// Writer adds to counters: one server-side increment of one random shard,
// the only write an increment costs. The HTTP function and Go callers share it.
type Writer struct {
	client *firestore.Client
	layout layout.Layout
	shards *shardCounts
}

// NewWriter returns a Writer for counters in client's database.
func NewWriter(client *firestore.Client, cfg WriterConfig) *Writer {
	if cfg.DefaultShards <= 0 {
		cfg.DefaultShards = DefaultShards
	}
	if cfg.CacheTTL <= 0 {
		cfg.CacheTTL = DefaultCacheTTL
	}
	return &Writer{
		client: client,
		layout: cfg.Layout,
		shards: newShardCounts(client, cfg.Layout, cfg.CacheTTL, cfg.DefaultShards, func(id string) bool {
			if cfg.Layout.OnDocs() {
				return false // the app creates its documents; tally never does
			}
			return cfg.AutoCreate || cfg.CreatePattern != nil && cfg.CreatePattern.MatchString(id)
		}),
	}
}

// Add adds by to count c of counter id (c as layout.Layout.Check resolved
// it) on a random shard in [0, num_shards), and says which shard took it:
// one write, with no transaction. An error that wraps ErrOutcomeUnknown
// means the write was sent and not confirmed: it may have been applied.
// Any other error means nothing was written. committed is the write's
// commit time: a fold whose as_of is at or past it counts it.
func (w *Writer) Add(ctx context.Context, id string, c layout.Count, by int64) (shard int, committed time.Time, err error) {
	n, err := w.shards.get(ctx, id)
	if err != nil {
		return 0, time.Time{}, err
	}
	if err := enoughTime(ctx); err != nil {
		return 0, time.Time{}, err
	}
	shard = rand.IntN(n)
	wr, err := w.layout.Shard(w.client, id, shard).Set(ctx,
		map[string]any{c.Shard: firestore.Increment(by)}, firestore.MergeAll)
	if err != nil {
		return shard, time.Time{}, commitError(opPlain, fmt.Errorf("increment: write shard %d of %s: %w", shard, id, err))
	}
	return shard, wr.UpdateTime, nil
}

// minCommitTime is the least time a commit is sent with: with less left of
// the request's deadline it could be cut off after Firestore applied it,
// and its outcome would be unknown, so the request is refused first.
const minCommitTime = 2 * time.Second

// enoughTime refuses, before anything is written, a request whose deadline
// leaves less than minCommitTime for its commit.
func enoughTime(ctx context.Context) error {
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < minCommitTime {
		return &httpError{status: http.StatusServiceUnavailable, msg: msgUnavailable, retryAfter: 1}
	}
	return nil
}
