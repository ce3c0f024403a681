// Package shard adds to counters: one server-side increment of one random
// shard, the only write a plain increment costs, with each counter's shard
// count cached for a short time. The Increment function and the Go client
// share it; it holds nothing of HTTP.
package shard

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"time"

	"cloud.google.com/go/firestore"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tallycounters/tally/layout"
)

// Defaults of Config's zero fields.
const (
	DefaultShards   = layout.DefaultShards // shards of an auto-created counter: one, until the rollup grows it
	DefaultCacheTTL = 10 * time.Second     // how long num_shards is cached
)

// MinCommitTime is the least time a commit is sent with: with less left of
// the request's deadline it could be cut off after Firestore applied it,
// and its outcome would be unknown, so the request is refused first.
const MinCommitTime = 2 * time.Second

// ErrNoTime refuses, before anything is written, an increment whose
// context leaves less than MinCommitTime for its commit.
var ErrNoTime = errors.New("increment: too little time left to commit: nothing was written")

// ErrOutcomeUnknown is wrapped by the error of an increment whose commit was
// sent to Firestore but not confirmed: it may or may not have been applied.
// Retrying it blindly may count it twice; a retry with the same
// Idempotency-Key, or of a vote, cannot.
var ErrOutcomeUnknown = errors.New("increment: the commit was sent and not confirmed: it may have been applied")

// Config configures an Adder. Zero fields take the defaults.
type Config struct {
	Layout        layout.Layout
	DefaultShards int            // shards of an auto-created counter, and of a counted document without num_shards; default 1
	AutoCreate    bool           // create any missing counter instead of layout.ErrNoCounter
	CreatePattern *regexp.Regexp // else create those whose whole id matches
	CacheTTL      time.Duration  // how long num_shards is cached; default 10s
}

// Adder adds to counters.
type Adder struct {
	client *firestore.Client
	layout layout.Layout
	counts *shardCounts
}

// New returns an Adder for counters in client's database.
func New(client *firestore.Client, cfg Config) *Adder {
	if cfg.DefaultShards <= 0 {
		cfg.DefaultShards = DefaultShards
	}
	if cfg.CacheTTL <= 0 {
		cfg.CacheTTL = DefaultCacheTTL
	}
	return &Adder{
		client: client,
		layout: cfg.Layout,
		counts: newShardCounts(client, cfg.Layout, cfg.CacheTTL, cfg.DefaultShards, func(id string) bool {
			if cfg.Layout.OnDocs() {
				return false // the app creates its documents; tally never does
			}
			return cfg.AutoCreate || cfg.CreatePattern != nil && cfg.CreatePattern.MatchString(id)
		}),
	}
}

// SetClock sets the clock cached shard counts expire by (time.Now by
// default), for tests that step it.
func (a *Adder) SetClock(now func() time.Time) { a.counts.now = now }

// NumShards is counter id's num_shards, cached; a missing counter is
// layout.ErrNoCounter, unless it may be created, which this does.
func (a *Adder) NumShards(ctx context.Context, id string) (int, error) {
	p, err := a.counts.get(ctx, id)
	return p.n, err
}

// Add adds by to count c of counter id (c as layout.Layout.Check resolved
// it) on a random shard in [0, num_shards), and says which shard took it:
// one write, with no transaction. An error that wraps ErrOutcomeUnknown
// means the write was sent and not confirmed: it may have been applied.
// Any other error means nothing was written. committed is the write's
// commit time: a fold whose as_of is at or past it counts it.
func (a *Adder) Add(ctx context.Context, id string, c layout.Count, by int64) (shard int, committed time.Time, err error) {
	p, err := a.counts.get(ctx, id)
	if err != nil {
		return 0, time.Time{}, err
	}
	if err := EnoughTime(ctx); err != nil {
		return 0, time.Time{}, err
	}
	shard = rand.IntN(p.n)
	wr, err := a.layout.Shard(a.client, id, p.life, shard).Set(ctx, a.fields(id, p, c, by), firestore.MergeAll)
	if err != nil {
		return shard, time.Time{}, Unconfirmed(fmt.Errorf("increment: write shard %d of %s: %w", shard, id, err))
	}
	return shard, wr.UpdateTime, nil
}

// Fields is what a write adding by to count c of counter id puts on the
// shard it picked: the server-side increment and, on a counter on one shard,
// the counted document's update time as read, so that the rollup can take
// the count from the write's event and write it with no read (see
// rollup/oneshard.go); with the counter's shards and the life of its
// document as read, under which its shards, votes and keys are. Votes and
// keys, in transactions, use it too.
func (a *Adder) Fields(ctx context.Context, id string, c layout.Count, by int64) (shards int, life string, fields map[string]any, err error) {
	p, err := a.counts.get(ctx, id)
	if err != nil {
		return 0, "", nil, err
	}
	return p.n, p.life, a.fields(id, p, c, by), nil
}

// fields is the increment and, on the first write after a read of the
// parent of a counter on one shard, the parent's update time as read; any
// other write deletes an update time left on the shard by an earlier one,
// so that no event carries one older than its writer knew.
func (a *Adder) fields(id string, p parent, c layout.Count, by int64) map[string]any {
	var seen any = firestore.Delete
	if !p.seen.IsZero() && a.counts.claim(id, p.seen) {
		seen = p.seen
	}
	m := map[string]any{c.Shard: firestore.Increment(by)}
	if path := a.layout.ParentSeenPath(); len(path) == 2 {
		m[path[0]] = map[string]any{path[1]: seen}
	} else {
		m[path[0]] = seen
	}
	return m
}

// EnoughTime is ErrNoTime for a context whose deadline leaves less than
// MinCommitTime.
func EnoughTime(ctx context.Context) error {
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < MinCommitTime {
		return ErrNoTime
	}
	return nil
}

// unconfirmed is the error of a commit that may have been applied.
type unconfirmed struct{ err error }

func (e *unconfirmed) Error() string   { return ErrOutcomeUnknown.Error() + ": " + e.err.Error() }
func (e *unconfirmed) Unwrap() []error { return []error{ErrOutcomeUnknown, e.err} }

// Unconfirmed is err, the failure of a commit sent to Firestore, marked as
// of unknown outcome (wrapping ErrOutcomeUnknown) unless its code says the
// commit was refused whole: then nothing was written, and it is err.
func Unconfirmed(err error) error {
	switch status.Code(err) {
	case codes.InvalidArgument, codes.NotFound, codes.AlreadyExists, codes.PermissionDenied, codes.FailedPrecondition,
		codes.Aborted, codes.OutOfRange, codes.Unimplemented, codes.Unauthenticated, codes.ResourceExhausted:
		return err
	}
	return &unconfirmed{err: err}
}
