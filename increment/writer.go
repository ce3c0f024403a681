package increment

import (
	"context"
	"math/rand/v2"
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
		shards: &shardCounts{
			client: client, layout: cfg.Layout, ttl: cfg.CacheTTL, defaults: cfg.DefaultShards,
			creatable: func(id string) bool {
				return cfg.AutoCreate || cfg.CreatePattern != nil && cfg.CreatePattern.MatchString(id)
			},
			now: time.Now, entries: map[string]cached{},
		},
	}
}

// Add adds by to a random shard in [0, num_shards) of counter id, which the
// caller has checked with layout.ValidID, and says which shard took it.
func (w *Writer) Add(ctx context.Context, id string, by int64) (shard int, err error) {
	n, err := w.shards.get(ctx, id)
	if err != nil {
		return 0, err
	}
	shard = rand.IntN(n)
	_, err = w.layout.Shard(w.client, id, shard).Set(ctx,
		map[string]any{w.layout.ShardField: firestore.Increment(by)}, firestore.MergeAll)
	return shard, err
}
