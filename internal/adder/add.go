package adder

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

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/fsrpc"
)

// Defaults of Config's zero fields.
const (
	DefaultCacheTTL = 10 * time.Second // how long num_shards is cached
)

// MinCommitTime is the least time a commit is sent with: with less left of
// the request's deadline it could be cut off after Firestore applied it,
// and its outcome would be unknown, so the request is refused first.
const MinCommitTime = 2 * time.Second

// Config configures an Adder. Zero fields take the defaults.
type Config struct {
	Layout        core.Layout
	DefaultShards int              // shards of an auto-created counter, and of a counted document without num_shards; default 1
	AutoCreate    bool             // create any missing counter instead of ErrNoCounter
	CreatePattern *regexp.Regexp   // else create those whose whole id matches
	CacheTTL      time.Duration    // how long num_shards is cached; default 10s
	Now           func() time.Time // the clock the cache expires by; nil: time.Now
	// InItself, if not 0, is the fold spacing: an increment of a counted
	// document that had no write for that long, of a count no board ranks,
	// is written into the document itself, its windows and trends with it
	// (own.go). 0: every increment goes to a shard.
	InItself time.Duration
}

// Adder adds to counters.
type Adder struct {
	client *firestore.Client
	layout core.Layout
	counts *shardCounts
	groups groups // each counter's writes in flight, and what waits for them
	// spacing: Config.InItself
	spacing time.Duration
}

// New returns an Adder for counters in client's database.
func New(client *firestore.Client, cfg Config) *Adder {
	if cfg.DefaultShards <= 0 {
		cfg.DefaultShards = core.DefaultShards
	}
	if cfg.CacheTTL <= 0 {
		cfg.CacheTTL = DefaultCacheTTL
	}
	a := &Adder{
		client:  client,
		layout:  cfg.Layout,
		spacing: cfg.InItself,
		counts: newShardCounts(client, cfg.Layout, cfg.CacheTTL, cfg.DefaultShards, func(id string) bool {
			if cfg.Layout.OnDocs() {
				return false // the app creates its documents; tally never does
			}
			return cfg.AutoCreate || cfg.CreatePattern != nil && cfg.CreatePattern.MatchString(id)
		}),
	}
	if cfg.Now != nil {
		a.counts.now = cfg.Now
	}
	return a
}

// Add adds by to count c of counter id (c as Layout.Check resolved
// it) on a random shard in [0, num_shards), and says which shard took it
// (InItself: the document itself, if Config.InItself allows it, own.go):
// one write, with no transaction, that holds every increment of the
// counter that reached this Adder while its last write was in flight
// (group.go). An error that wraps ErrOutcomeUnknown means the write was
// sent and not confirmed: it may have been applied. Any other error means
// nothing was written. committed is the write's commit time: a fold whose
// as_of is at or past it counts it (one written into the document itself
// the document holds from then on, whatever its as_of).
func (a *Adder) Add(ctx context.Context, id string, c core.Count, by int64) (shard int, committed time.Time, err error) {
	if err := EnoughTime(ctx); err != nil {
		return 0, time.Time{}, err
	}
	itself := a.spacing > 0 && a.layout.CountedInItself(id, c)
	if itself { // on what is cached, however old: the write's precondition is that it is still so
		if committed, ok, err := a.addOwn(ctx, id, c, by, nil); ok || err != nil {
			return InItself, committed, err
		}
	}
	p, err := a.counts.get(ctx, id)
	if err != nil {
		return 0, time.Time{}, err
	}
	if itself { // as just read
		if committed, ok, err := a.addOwn(ctx, id, c, by, nil); ok || err != nil {
			return InItself, committed, err
		}
	}
	if err := EnoughTime(ctx); err != nil {
		return 0, time.Time{}, err
	}
	if amounts := map[string]int64{c.Shard: by}; !p.blind(amounts) {
		return a.writeChecked(ctx, id, p, amounts) // near the edge (edge.go): alone, and read
	}
	return a.Batched(ctx, id, c.Shard, by, nil, func(ctx context.Context, _ []any, by map[string]int64) (int, time.Time, error) {
		return a.write(ctx, id, p, by)
	})
}

// A BatchWrite writes a batch: the items its increments carry, and their
// amounts by shard field, in one commit, within ctx.
type BatchWrite func(ctx context.Context, items []any, by map[string]int64) (shard int, committed time.Time, err error)

// Batched is group commit (group.go) for the increments of group key (a
// counter, or a kind of increment of it): one of by to field, carrying
// item, goes in the batch it joins, and write, given by the batch's
// first, writes the batch, within that first's deadline even if its
// caller goes away; each increment is answered with the batch's shard,
// commit time and error. One whose amount would take the batch's past
// int64 is written alone. A caller whose context ends while its batch is
// still being written is answered at once with an error that wraps
// ErrOutcomeUnknown: its increment is in that write, which may yet
// commit.
func (a *Adder) Batched(ctx context.Context, key, field string, by int64, item any, write BatchWrite) (shard int, committed time.Time, err error) {
	b, first := a.groups.join(key, field, by, item)
	switch {
	case b == nil: // too much to join the waiting batch: on its own
		return write(ctx, []any{item}, map[string]int64{field: by})
	case !first: // the batch's first writes it, whatever becomes of this request
		select {
		case <-b.done:
			return b.shard, b.committed, b.err
		case <-ctx.Done():
			return 0, time.Time{}, core.Unconfirmed(fmt.Errorf("adder: an increment of %s waited for its batch's write until %w", key, ctx.Err()))
		}
	}
	a.groups.wait(key, b)
	wctx := context.WithoutCancel(ctx)
	if dl, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		wctx, cancel = context.WithDeadline(wctx, dl)
		defer cancel()
	}
	began := time.Now()
	defer func() {
		// whatever write does, a panic too, the batch's waiters are
		// answered and the counter's next batch takes its turn
		if r := recover(); r != nil {
			b.err = core.Unconfirmed(fmt.Errorf("adder: the write of %s's batch panicked: %v", key, r))
			defer panic(r)
		}
		close(b.done)
		a.groups.release(key, time.Since(began))
	}()
	b.shard, b.committed, b.err = write(wctx, b.items, b.by)
	return b.shard, b.committed, b.err
}

// write adds the amounts by (by shard field) to a random shard of counter
// id, as p knows it, in one write.
func (a *Adder) write(ctx context.Context, id string, p parent, by map[string]int64) (shard int, committed time.Time, err error) {
	shard = rand.IntN(p.n)
	cctx, commitTime := fsrpc.WithCommitTime(a.Verify(ctx, id))
	wr, err := a.layout.Shard(a.client, id, p.life, shard).Set(cctx, a.fields(id, p, by), firestore.MergeAll)
	if status.Code(err) == codes.NotFound && a.layout.OnDocs() {
		// A merge-set has no precondition of its own: the verify failed.
		a.counts.forget(id)
		return shard, time.Time{}, noDocument(id)
	}
	if err != nil {
		return shard, time.Time{}, core.Unconfirmed(fmt.Errorf("core: write shard %d of %s: %w", shard, id, err))
	}
	// The commit's own time: a write that changes nothing (an increment of
	// a shard held at 2^63-1, where Firestore's increment saturates) has
	// the shard's last update time as its update time, an earlier commit's.
	if at := commitTime(); !at.IsZero() {
		return shard, at, nil
	}
	return shard, wr.UpdateTime, nil
}

// Verify returns ctx whose commits (of a shard write, a vote, a key's
// record) apply only if counter id's document exists when they commit,
// on documents (fsrpc.WithVerify): a write for a document deleted since
// this Adder last read it then fails NOT_FOUND whole, and nothing is
// written for a document that is gone. The guide layout's counters/{id}
// need no parent, so their commits are sent as they are.
func (a *Adder) Verify(ctx context.Context, id string) context.Context {
	if !a.layout.OnDocs() {
		return ctx
	}
	return fsrpc.WithVerify(ctx, a.layout.Counter(a.client, id).Path)
}

// Fresh reads counter id's document now, into the cache that Fields
// reads, and says when it was last updated: a vote's commit, whose
// record is of the document's life, is made in the life the document has
// (a document deleted and created again within the cache's age has
// another), on the condition that it is still as read (VerifyAt).
func (a *Adder) Fresh(ctx context.Context, id string) (updated time.Time, err error) {
	a.counts.forget(id)
	p, err := a.counts.get(ctx, id)
	return p.updated, err
}

// VerifyAt is Verify, on the condition that counter id's document was
// last updated at at (Fresh): else the commit fails FAILED_PRECONDITION,
// or NOT_FOUND, writing nothing.
func (a *Adder) VerifyAt(ctx context.Context, id string, at time.Time) context.Context {
	if !a.layout.OnDocs() || at.IsZero() {
		return a.Verify(ctx, id)
	}
	return fsrpc.WithVerifyAt(ctx, a.layout.Counter(a.client, id).Path, at)
}

// Changed reports whether counter id's document is no longer as last
// updated at at: deleted, written or created again since. It reads it.
func (a *Adder) Changed(ctx context.Context, id string, at time.Time) (bool, error) {
	updated, err := a.Fresh(ctx, id)
	if errors.Is(err, core.ErrNoCounter) {
		return true, nil
	}
	return !updated.Equal(at), err
}

// Gone is, after a commit sent with Verify failed NOT_FOUND, ErrNoCounter
// if counter id's document does not exist now (a verify's failure), or
// nil if it does (the failure was a precondition of another write of the
// commit's, such as a vote's). It reads the document, and forgets what
// was cached of it.
func (a *Adder) Gone(ctx context.Context, id string) error {
	if !a.layout.OnDocs() {
		return nil
	}
	a.counts.forget(id)
	_, err := a.counts.get(ctx, id)
	if errors.Is(err, core.ErrNoCounter) {
		return err
	}
	return nil
}

// Fields is what a write adding by to count c of counter id puts on the
// shard it picked: the server-side increment and, on a counter on one shard,
// the counted document's update time as read, so that the rollup can take
// the count from the write's event and write it with no read (see
// rollup/oneshard.go); with the counter's shards and the life of its
// document as read, under which its shards, votes and keys are. Votes and
// keys, in transactions, use it too.
func (a *Adder) Fields(ctx context.Context, id string, c core.Count, by int64) (shards int, life string, fields map[string]any, err error) {
	return a.FieldsOf(ctx, id, map[string]int64{c.Shard: by})
}

// FieldsOf is Fields for several amounts, by shard field, in one write.
func (a *Adder) FieldsOf(ctx context.Context, id string, by map[string]int64) (shards int, life string, fields map[string]any, err error) {
	p, err := a.counts.get(ctx, id)
	if err != nil {
		return 0, "", nil, err
	}
	return p.n, p.life, a.fields(id, p, by), nil
}

// EnoughTime is ErrNoTime for a context whose deadline leaves less than
// MinCommitTime.
func EnoughTime(ctx context.Context) error {
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < MinCommitTime {
		return core.ErrNoTime
	}
	return nil
}
