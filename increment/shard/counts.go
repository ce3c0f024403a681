package shard

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

	"github.com/tallycounters/tally/layout"
)

const (
	maxCached   = 10000            // counters whose num_shards is cached; past it, the least recently used is dropped
	loadTimeout = 10 * time.Second // bound on one read (and create) of a parent
)

// shardCounts caches each counter's num_shards for a short time, so that a
// busy counter costs one shard write per increment and no read.
type shardCounts struct {
	client    *firestore.Client
	layout    layout.Layout
	ttl       time.Duration
	defaults  int
	creatable func(id string) bool // whether a missing counter may be created
	now       func() time.Time

	group   singleflight.Group
	mu      sync.Mutex
	entries *simplelru.LRU[string, cached]
}

// newShardCounts returns an empty cache of at most maxCached counters.
func newShardCounts(client *firestore.Client, l layout.Layout, ttl time.Duration, defaults int, creatable func(string) bool) *shardCounts {
	entries, _ := simplelru.NewLRU[string, cached](maxCached, nil)
	return &shardCounts{client: client, layout: l, ttl: ttl, defaults: defaults, creatable: creatable, now: time.Now, entries: entries}
}

type cached struct {
	n       int
	expires time.Time
}

// get returns counter id's shard count, reading the parent (and creating it,
// when allowed) at most once per ttl and instance.
func (s *shardCounts) get(ctx context.Context, id string) (int, error) {
	s.mu.Lock()
	e, ok := s.entries.Get(id)
	s.mu.Unlock()
	if ok && s.now().Before(e.expires) {
		return e.n, nil
	}
	// Concurrent misses share one load. It outlives any one caller, so it
	// runs on its own bounded context, and each caller waits on its own.
	ch := s.group.DoChan(id, func() (any, error) {
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), loadTimeout)
		defer cancel()
		n, err := s.load(lctx, id)
		if err != nil {
			return 0, err
		}
		s.put(id, n)
		return n, nil
	})
	select {
	case r := <-ch:
		if r.Err != nil {
			return 0, r.Err
		}
		return r.Val.(int), nil
	case <-ctx.Done():
		return 0, fmt.Errorf("increment: read counter %s: %w", id, ctx.Err())
	}
}

func (s *shardCounts) put(id string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.entries.Add(id, cached{n: n, expires: s.now().Add(s.ttl)})
}

// load reads num_shards from the parent. A parent without it (one the rollup
// created before anything else) uses the default. A missing parent is
// created with the default when auto-create is on.
func (s *shardCounts) load(ctx context.Context, id string) (int, error) {
	ref := s.layout.Counter(s.client, id)
	for attempt := 0; attempt < 2; attempt++ {
		snap, err := ref.Get(ctx)
		if err == nil {
			n, err := s.layout.NumShards(snap.Data())
			if err != nil {
				return 0, fmt.Errorf("increment: counter %s: %w", id, err)
			}
			if n == 0 {
				n = s.defaults // a parent the rollup made before anyone set it
			}
			return n, nil
		}
		if status.Code(err) != codes.NotFound {
			return 0, fmt.Errorf("increment: read counter %s: %w", id, err)
		}
		if !s.creatable(id) {
			return 0, fmt.Errorf("increment: counter %s: %w", id, layout.ErrNoCounter)
		}
		_, err = ref.Create(ctx, map[string]any{layout.FieldNumShards: int64(s.defaults), layout.FieldTotal: int64(0)})
		if err == nil {
			return s.defaults, nil
		}
		if status.Code(err) != codes.AlreadyExists {
			return 0, fmt.Errorf("increment: create counter %s: %w", id, err)
		}
		// Created meanwhile by someone else: read what they wrote.
	}
	return 0, fmt.Errorf("increment: counter %s was deleted while being created", id)
}
