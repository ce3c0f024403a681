// Package counter is tally's Go client: create, increment, read, watch,
// reshard, reset, reconcile and delete counters. It writes the same documents
// the functions do, so it works beside them, for server-side Go apps and for
// the tally command.
//
// With counts on the app's documents (a Layout whose TALLY_COUNTS declares
// some), a counter is named by its document's path, posts/p1, and the
// methods that read or add to one count take its field ("" in the guide
// layout, counters/{id}): Add (AddCommitted, to know when it committed),
// Get (as the last fold wrote it), Sum (as its shards hold it now),
// Value (any field tally keeps) and Watch. Values reads every field of a
// document at once. The others act on every count of the document, and
// never create or delete the document itself.
package counter

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"cloud.google.com/go/firestore"
	"google.golang.org/api/option"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tallycounters/tally/internal/adder"
	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/fold"
	"github.com/tallycounters/tally/internal/fsrpc"
)

// NewFirestoreClient returns a client for database of project (or the
// emulator in FIRESTORE_EMULATOR_HOST) built as the functions build
// theirs, for New: its folds sum at one read time in a single call, and a
// plain increment that failed unavailable is not sent again blind, as it
// may have been applied (its error then wraps ErrOutcomeUnknown).
func NewFirestoreClient(ctx context.Context, project, database string, opts ...option.ClientOption) (*firestore.Client, error) {
	return fsrpc.NewClient(ctx, project, database, nil, opts...)
}

// Errors a caller may test for with errors.Is.
var (
	ErrNotFound  = core.ErrNoCounter // the same value the functions' packages return
	ErrExists    = errors.New("counter already exists")
	ErrPastLimit = core.ErrPastLimit // a step that would take a count past ±2^62: nothing was written
)

// Options configures a Client. Zero fields take the defaults.
type Options struct {
	Layout Layout // the deployed functions' (LayoutFromEnv); default the guide's. New panics if it does not read
	// DefaultShards is the deployment's TALLY_DEFAULT_SHARDS: the shards
	// of a missing counter Add creates, and of a counted document without
	// num_shards, which the boundary job reads by it. Default 1.
	DefaultShards int
	// ShardCacheTTL is how long the deployed Increment caches num_shards
	// (its TALLY_SHARD_CACHE_TTL). Reshard waits this long, and a little
	// more, before it removes shards. Default 10s.
	ShardCacheTTL time.Duration
	// Spacing is the deployed rollup's TALLY_ROLLUP_WINDOW: the folds of
	// Reset and Reconcile keep to it too. Default 1s.
	Spacing time.Duration
	// Timeout, if set, bounds each Firestore call the Client makes: a get,
	// a query, a transaction, a fold (with its wait for the fold spacing), and
	// 500 documents of a bulk write.
	Timeout time.Duration
	// RefuseMissing makes Add to a counter that does not exist fail with
	// ErrNotFound and create nothing. By default it creates the counter
	// with DefaultShards, as Increment does with
	// TALLY_AUTO_CREATE. (On documents, a missing document is always
	// refused.)
	RefuseMissing bool
	// Progress, if set, hears how far a long operation has got (the moves
	// of a reshard or a reconcile, the writes of a reset or a delete), at
	// most once every ProgressEvery: a line for a person.
	Progress func(string)
}

// Client administers counters in one Firestore database.
type Client struct {
	fs       *firestore.Client
	layout   core.Layout
	writer   *adder.Adder
	folder   *fold.Folder
	cacheTTL time.Duration
	timeout  time.Duration
	shards   int // Options.DefaultShards
	spacing  time.Duration
	report   func(string)  // Options.Progress
	every    time.Duration // between two reports of progress: ProgressEvery
	page     int           // counters listed a page at a time, in the guide layout; 0: listPage
}

// New returns a Client using fs.
func New(fs *firestore.Client, o Options) *Client {
	layout := core.MustParse(o.Layout)
	if o.ShardCacheTTL <= 0 {
		o.ShardCacheTTL = adder.DefaultCacheTTL
	}
	if o.DefaultShards <= 0 {
		o.DefaultShards = core.DefaultShards
	}
	if o.Spacing <= 0 {
		o.Spacing = fold.DefaultSpacing
	}
	folder := fold.NewFolder(fs, layout, o.Spacing)
	folder.SetDefaultShards(o.DefaultShards)
	return &Client{
		fs:       fs,
		layout:   layout,
		writer:   adder.New(fs, adder.Config{Layout: layout, DefaultShards: o.DefaultShards, AutoCreate: !o.RefuseMissing, CacheTTL: o.ShardCacheTTL}),
		folder:   folder,
		cacheTTL: o.ShardCacheTTL,
		shards:   o.DefaultShards,
		timeout:  o.Timeout,
		spacing:  o.Spacing,
		report:   o.Progress,
		every:    ProgressEvery,
	}
}

// bound gives one Firestore call its deadline: n times the Timeout, if set.
func (c *Client) bound(ctx context.Context, n int) (context.Context, context.CancelFunc) {
	if c.timeout <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, time.Duration(max(n, 1))*c.timeout)
}

// boundFold gives a fold its deadline: a read, a sum and a write, and the
// rest of a window to wait.
func (c *Client) boundFold(ctx context.Context) (context.Context, context.CancelFunc) {
	if c.timeout <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, 3*c.timeout+c.spacing)
}

// listBatches is how many Timeouts listing a collection may take.
const listBatches = 6

// Create makes counter id with the given number of shards. In the guide
// layout that is the parent with num_shards and total 0, and every shard
// with count 0. On documents, the app's document id (a path such as
// posts/p1) must exist, as tally never creates one: Create sets its
// num_shards in tally's bookkeeping and each count it does not hold yet to
// 0, so that queries ordered by a count find it, and creates the shards
// with every count at 0.
func (c *Client) Create(ctx context.Context, id string, shards int) error {
	if err := c.check(id, shards); err != nil {
		return err
	}
	cctx, cancel := c.bound(ctx, 1)
	defer cancel()
	var err error
	if c.layout.OnDocs() {
		err = c.adopt(cctx, id, shards)
	} else {
		_, err = c.layout.Counter(c.fs, id).Create(cctx, map[string]any{
			core.FieldNumShards: int64(shards), core.FieldTotal: int64(0),
		})
	}
	switch {
	case status.Code(err) == codes.AlreadyExists:
		return fmt.Errorf("counter: create %s: %w", id, ErrExists)
	case err != nil:
		return fmt.Errorf("counter: create %s: %w", id, err)
	}
	life, err := c.life(ctx, id)
	if err != nil {
		return fmt.Errorf("counter: create %s: %w", id, err)
	}
	return c.createShards(ctx, id, life, 0, shards)
}

// adopt sets up counts on the app's document id: num_shards, and 0 for
// each count it lacks, in one transaction that touches nothing else.
func (c *Client) adopt(ctx context.Context, id string, shards int) error {
	ref := c.layout.Counter(c.fs, id)
	return c.fs.RunTransaction(ctx, func(ctx context.Context, tx *firestore.Transaction) error {
		snap, err := tx.Get(ref)
		if status.Code(err) == codes.NotFound {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		data := snap.Data()
		if n, _ := c.layout.NumShards(data); n > 0 {
			return status.Error(codes.AlreadyExists, "num_shards is set")
		}
		updates := []firestore.Update{{FieldPath: c.layout.NumShardsPath(), Value: int64(shards)}}
		for _, k := range c.layout.Counts(id) {
			if _, ok := data[k.Field]; !ok {
				updates = append(updates, firestore.Update{FieldPath: firestore.FieldPath{k.Field}, Value: int64(0)})
			}
		}
		return tx.Update(ref, updates)
	})
}

// createShards creates shards [from, to) of id's life with every count
// at 0, leaving any that exist alone.
func (c *Client) createShards(ctx context.Context, id, life string, from, to int) error {
	refs := make([]*firestore.DocumentRef, 0, max(0, to-from))
	for n := from; n < to; n++ {
		refs = append(refs, c.layout.Shard(c.fs, id, life, n))
	}
	zero := map[string]any{}
	for _, k := range c.layout.Counts(id) {
		zero[k.Shard] = int64(0)
	}
	err := c.bulk(ctx, id, refs, func(bw *firestore.BulkWriter, ref *firestore.DocumentRef) (*firestore.BulkWriterJob, error) {
		return bw.Create(ref, zero)
	})
	if err != nil {
		return fmt.Errorf("counter: create shards of %s: %w", id, err)
	}
	return nil
}

// Add adds by to the count field of id with one write to one random
// shard, as the Increment function does: field is "" in the guide layout
// (a missing counter is created with the default shards), a declared
// count on documents, whose document must exist (else ErrNotFound, as for
// a missing counter with RefuseMissing).
func (c *Client) Add(ctx context.Context, id, field string, by int64) error {
	_, err := c.AddCommitted(ctx, id, field, by)
	return err
}

// AddCommitted is Add that also says when the increment committed: the
// time that places it in the buckets of a window of its count.
func (c *Client) AddCommitted(ctx context.Context, id, field string, by int64) (time.Time, error) {
	k, err := c.layout.Check(id, field)
	if err != nil {
		return time.Time{}, fmt.Errorf("counter: %w", err)
	}
	ctx, cancel := c.bound(ctx, 2)
	defer cancel()
	_, committed, err := c.writer.Add(ctx, id, k, by)
	if err != nil {
		return time.Time{}, fmt.Errorf("counter: increment %s: %w", describe(id, field), err)
	}
	return committed, nil
}

// Get is the count field of id as the rollup keeps it (field "" is the
// guide layout's total), or an aggregate of id's that is a whole number (a
// count of its children): one document read.
func (c *Client) Get(ctx context.Context, id, field string) (int64, error) {
	v, err := c.read(ctx, id, field)
	n, _ := v.(int64)
	return n, err
}

// read is field of id: a count, an aggregate or a window.
func (c *Client) read(ctx context.Context, id, field string) (any, error) {
	snap, err := c.readDoc(ctx, id, field)
	switch {
	case err != nil:
		return nil, err
	case snap == nil:
		// Shards with no parent yet (as Google's samples make them): the
		// total is their sum until a fold makes the parent.
		return c.Sum(ctx, id, "")
	case field == "" && !c.layout.OnDocs():
		field = core.FieldTotal
	}
	if v, ok := snap.Data()[field]; ok {
		return v, nil
	}
	return c.layout.BeforeFold(id, field), nil
}

// readDoc reads the counted document of id for its field (a count, an
// aggregate, a window or a trend): nil, with no error, for a counter of
// the guide layout that has shards and no parent yet.
func (c *Client) readDoc(ctx context.Context, id, field string) (*firestore.DocumentSnapshot, error) {
	if c.layout.Kept(id, field) == "" {
		if _, err := c.layout.Check(id, field); err != nil {
			return nil, fmt.Errorf("counter: %w", err)
		}
	}
	ctx, cancel := c.bound(ctx, 1)
	defer cancel()
	snap, err := c.layout.Counter(c.fs, id).Get(ctx)
	if status.Code(err) == codes.NotFound && !c.layout.OnDocs() && (field == "" || field == core.FieldTotal) {
		return nil, nil
	}
	if status.Code(err) == codes.NotFound {
		return nil, fmt.Errorf("counter: %s of %s: %w", field, id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("counter: %s of %s: %w", field, id, err)
	}
	return snap, nil
}

// Sum is the count field of id (field "" in the guide layout) as its
// shards hold it now, with what the document keeps of it itself (its own
// part), strongly consistent where Get reads what the last fold wrote: a
// sum() aggregation over the shards, billed as one read per 1,000 shards,
// besides the read of the document; on a document with an own part, every
// count's, at that read's time.
func (c *Client) Sum(ctx context.Context, id, field string) (int64, error) {
	k, err := c.layout.Check(id, field)
	if err != nil {
		return 0, fmt.Errorf("counter: %w", err)
	}
	life, snap, err := c.readLife(ctx, id)
	if err != nil {
		return 0, fmt.Errorf("counter: sum of %s: %w", describe(id, field), err)
	}
	ctx, cancel := c.bound(ctx, 1)
	defer cancel()
	if snap != nil {
		counts := c.layout.Counts(id)
		if own := c.layout.OwnValues(snap.Data(), counts); own != nil {
			s, err := c.folder.SumAt(ctx, id, life, snap.ReadTime)
			if err != nil {
				return 0, fmt.Errorf("counter: sum of %s: %w", describe(id, field), err)
			}
			return core.WithOwn(s.Values, own)[slices.Index(counts, k)], nil
		}
	}
	sum, err := c.folder.SumCount(ctx, id, life, k)
	if err != nil {
		return 0, fmt.Errorf("counter: sum of %s: %w", describe(id, field), err)
	}
	return sum, nil
}

// describe names a count in messages: id, or id.field.
func describe(id, field string) string {
	if field == "" {
		return id
	}
	return id + "." + field
}

func (c *Client) check(id string, shards int) error {
	if err := c.layout.CheckName(id); err != nil {
		return fmt.Errorf("counter: %w", err)
	}
	if shards < 1 || shards > core.MaxShards {
		return fmt.Errorf("counter: %d shards: want 1 to %d", shards, core.MaxShards)
	}
	return nil
}
