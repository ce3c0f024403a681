package adder

import (
	"context"
	"fmt"
	"sync"
	"time"

	"cloud.google.com/go/firestore"
	"github.com/hashicorp/golang-lru/v2/simplelru"
	"golang.org/x/sync/singleflight"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/core/rank"
)

const (
	maxCached   = 10000            // counters whose num_shards is cached; past it, the least recently used is dropped
	loadTimeout = 10 * time.Second // bound on one read (and create) of a parent
)

// A busy counter's parent is read again, in the background, once this
// instance has written it RefreshWrites times and RefreshAge has passed
// since the last read, so that an instance writing a counter that grew
// uses its new shards within RefreshAge, not its cache's TTL, having
// written at most RefreshWrites increments on the old ones. It costs a
// read per RefreshWrites increments at most, and nothing for a counter
// written less often than that per TTL.
const (
	RefreshWrites = 10
	RefreshAge    = 250 * time.Millisecond
)

// shardCounts caches each counter's num_shards for a short time, so that a
// busy counter costs one shard write per increment and no read, and reads
// a busy counter's again sooner (RefreshAge), so that growth shows.
type shardCounts struct {
	client    *firestore.Client
	layout    core.Layout
	ttl       time.Duration
	defaults  int
	creatable func(id string) bool // whether a missing counter may be created
	now       func() time.Time

	group   singleflight.Group
	mu      sync.Mutex
	entries *simplelru.LRU[string, cached]
}

// newShardCounts returns an empty cache of at most maxCached counters.
func newShardCounts(client *firestore.Client, l core.Layout, ttl time.Duration, defaults int, creatable func(string) bool) *shardCounts {
	entries, _ := simplelru.NewLRU[string, cached](maxCached, nil)
	return &shardCounts{client: client, layout: l, ttl: ttl, defaults: defaults, creatable: creatable, now: time.Now, entries: entries}
}

type cached struct {
	parent
	loaded  time.Time // when it was read
	expires time.Time
	carried bool // a write has carried seen already
	writes  int  // writes since it was read
	owning  bool // an increment is being written into the document itself (own.go)
}

// parent is what an increment needs of a counted document: its shard count
// and, if every increment goes to shard 0 (see Layout.OneShard), its
// update time as read, which the write of shard 0 carries to the rollup.
type parent struct {
	n    int
	life string    // of the counted document as read ("" in the guide layout): where its shards are
	seen time.Time // zero unless the counter is on one shard
	// ranked is the cells the document recorded at seen, by field (package
	// rank), if it is ranked.
	ranked map[string]any
	// counts are the counted document's counts as read, by shard field:
	// how near they are to the edge (edge.go).
	counts map[string]int64
	// updated is the counted document's update time as read, or as this
	// instance last wrote it itself; learned is the local time it was
	// known by, and quietFor how long the document had had no write then.
	updated  time.Time
	learned  time.Time
	quietFor time.Duration
	// times is the document's windows and trends as read, or as this
	// instance last wrote them itself (Windows, Trends, NextBoundary), if
	// it has any.
	times core.Parent
}

// get returns counter id's shard count, reading the parent (and creating it,
// when allowed) at most once per ttl and instance, and, for a counter on one
// shard, the parent's update time as read.
func (s *shardCounts) get(ctx context.Context, id string) (parent, error) {
	now := s.now()
	s.mu.Lock()
	e, ok := s.entries.Get(id)
	fresh := ok && now.Before(e.expires)
	if fresh {
		e.writes++
		s.entries.Add(id, e)
	}
	s.mu.Unlock()
	if fresh {
		if e.writes >= RefreshWrites && now.Sub(e.loaded) >= RefreshAge {
			s.refresh(ctx, id) // busy: read it again, and write on what is cached meanwhile
		}
		return e.parent, nil
	}
	select {
	case r := <-s.refresh(ctx, id):
		if r.Err != nil {
			return parent{}, r.Err
		}
		return r.Val.(parent), nil
	case <-ctx.Done():
		return parent{}, fmt.Errorf("core: read counter %s: %w", id, ctx.Err())
	}
}

// refresh reads counter id's parent into the cache. Concurrent refreshes
// share one read, which outlives any one caller: it runs on its own
// bounded context, and each caller that waits for it waits on its own.
func (s *shardCounts) refresh(ctx context.Context, id string) <-chan singleflight.Result {
	return s.group.DoChan(id, func() (any, error) {
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), loadTimeout)
		defer cancel()
		p, err := s.load(lctx, id)
		if err != nil {
			return parent{}, err
		}
		s.put(id, p)
		return p, nil
	})
}

func (s *shardCounts) put(id string, p parent) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	s.entries.Add(id, cached{parent: p, loaded: now, expires: now.Add(s.ttl)})
}

// load reads num_shards from the parent. A parent without it (one the rollup
// created before anything else) uses the default. A missing parent is
// created with the default when auto-create is on.
func (s *shardCounts) load(ctx context.Context, id string) (parent, error) {
	ref := s.layout.Counter(s.client, id)
	for attempt := 0; attempt < 2; attempt++ {
		snap, err := ref.Get(ctx)
		if err == nil {
			data := snap.Data()
			n, err := s.layout.NumShards(data)
			if err != nil {
				return parent{}, fmt.Errorf("core: counter %s: %w", id, err)
			}
			if n == 0 {
				n = s.defaults // a parent the rollup made before anyone set it
			}
			p := parent{n: n, life: s.layout.LifeIn(data, snap.CreateTime), counts: map[string]int64{},
				updated: snap.UpdateTime, learned: time.Now(), quietFor: snap.ReadTime.Sub(snap.UpdateTime)}
			counts := s.layout.Counts(id)
			for _, c := range counts {
				p.counts[c.Shard], _ = data[c.Field].(int64)
			}
			if len(s.layout.WindowsOf(id)) > 0 {
				read := core.ParentFrom(s.layout, id, snap, time.Now())
				p.times = core.Parent{Windows: read.Windows, Trends: read.Trends, NextBoundary: read.NextBoundary}
			}
			// With an own part (own.go), shard 0 is not the whole count: a
			// fold reads the document.
			if s.layout.OneShard(data, s.defaults) && s.layout.OwnValues(data, counts) == nil {
				p.seen = snap.UpdateTime
				book, _ := data[core.FieldBookkeeping].(map[string]any)
				p.ranked, _ = book[rank.FieldRank].(map[string]any)
			}
			return p, nil
		}
		if status.Code(err) != codes.NotFound {
			return parent{}, fmt.Errorf("core: read counter %s: %w", id, err)
		}
		if !s.creatable(id) {
			if s.layout.OnDocs() {
				return parent{}, noDocument(id)
			}
			// Shards with no parent, as Google's samples make them, are a
			// counter of the default shards until a fold makes its parent.
			some, err := s.layout.AnyShard(ctx, s.client, id, "")
			if err != nil {
				return parent{}, err
			}
			if !some {
				return parent{}, missing(id, "counter %s does not exist, and this deployment creates no counters "+
					"(TALLY_AUTO_CREATE is off, and TALLY_COUNTER_PATTERN, if set, does not match it): "+
					"create it with 'tally create %s', or allow it. Nothing was written", id, id)
			}
			return parent{n: s.defaults}, nil
		}
		wr, err := ref.Create(ctx, map[string]any{core.FieldNumShards: int64(s.defaults), core.FieldTotal: int64(0)})
		if err == nil {
			p := parent{n: s.defaults}
			if s.defaults == 1 {
				p.seen = wr.UpdateTime
			}
			return p, nil
		}
		if status.Code(err) != codes.AlreadyExists {
			return parent{}, fmt.Errorf("core: create counter %s: %w", id, err)
		}
		// Created meanwhile by someone else: read what they wrote.
	}
	return parent{}, fmt.Errorf("core: counter %s was deleted while being created", id)
}

// noDocument is core.ErrNoCounter for the counted document id, which does
// not exist.
func noDocument(id string) error {
	return missing(id, "%s does not exist: tally counts in fields of documents your app creates, "+
		"and never creates one; create %s, then count on it. Nothing was written", id, id)
}

// forget drops what is cached of counter id: the next increment reads it.
func (s *shardCounts) forget(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.entries.Remove(id)
}

// missing is core.ErrNoCounter for counter id, with a message that says
// what to do.
func missing(id, format string, args ...any) error {
	return &core.Error{Code: core.NotFound, Message: fmt.Sprintf(format, args...), Err: core.ErrNoCounter}
}
