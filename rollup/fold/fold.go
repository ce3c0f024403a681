// Package fold brings a counted document up to date with its shards: a
// fold sums each count over the shards at one read time, with no lock on
// them, and writes those sums and that time (as_of) to the document in one
// compare-and-set, at most once per window. Rollup's event handling and the
// Go client's Reset and Reconcile both fold with it.
package fold

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"cloud.google.com/go/firestore"
	"cloud.google.com/go/firestore/apiv1/firestorepb"
	"github.com/googleapis/gax-go/v2"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tallycounters/tally/internal/fsrpc"
	"github.com/tallycounters/tally/layout"
)

// ErrNoCounter is returned for a counter without a parent. It is
// layout.ErrNoCounter.
var ErrNoCounter = layout.ErrNoCounter

// ErrSumNotInteger means sum() over a counter's shards came back as a
// double: the sum is past int64, or a shard holds a non-integer count. No
// fold can succeed until the shards are repaired, so nothing is written.
var ErrSumNotInteger = errors.New("the shards' sum is not an int64")

// ErrNoShardField means no shard of a counter whose total is not 0 holds
// the shard field: most likely the field is misconfigured
// (TALLY_SHARD_FIELD), and writing the sum, 0, would wipe the total. Nothing
// is written.
var ErrNoShardField = errors.New("no shard holds the shard field")

// ErrStale ends a fold whose view of the parent is out of date: someone
// wrote or deleted it since. Read it again.
var ErrStale = errors.New("parent changed since it was read")

// ErrTooSoon ends a fold whose sum is within the window of the parent's
// last write: not this fold's to write.
var ErrTooSoon = errors.New("within the window of the parent's last write")

// Folder folds counters: it sums each count of a counted document over
// its shards, all at one read time, with no lock on them, and writes those
// sums and that time to the document in one write, if its as_of is older
// and tally's last write of it is at least a window old.
type Folder struct {
	client     *firestore.Client
	layout     layout.Layout
	window     time.Duration
	noReadTime atomic.Bool // the client reports no aggregation read times
}

// DefaultWindow is the least time between two writes of a parent by folds:
// Firestore's sustained one write per second per document.
const DefaultWindow = time.Second

// Precise cuts t to the microseconds Firestore keeps.
func Precise(t time.Time) time.Time { return t.Truncate(time.Microsecond) }

// Layout is where the Folder's counters are.
func (f *Folder) Layout() layout.Layout { return f.layout }

// Window is the least time between two writes of a parent by folds.
func (f *Folder) Window() time.Duration { return f.window }

// NewFolder returns a Folder for counters in client's database, writing each
// parent at most once per window.
func NewFolder(client *firestore.Client, l layout.Layout, window time.Duration) *Folder {
	return &Folder{client: client, layout: l, window: window}
}

// Sum is sum() over a counter's shards at one read time, for each of its
// counts.
type Sum struct {
	At     time.Time // the read time
	Values []int64   // each count's sum, in layout.Counts order
	Shards []int64   // shard documents summed for each count: those that hold its field
}

// Fold says what one fold did.
type Fold struct {
	Counter   string    `json:"counter"`
	Before    []int64   `json:"totals_before"` // the counts when read, in layout.Counts order
	Sum       Sum       `json:"-"`
	Wrote     bool      `json:"wrote"`   // false: the parent already held this or a later snapshot, or there is nothing to hold
	Updated   time.Time `json:"updated"` // the write's commit time
	NumShards int       `json:"num_shards"`
	Grew      bool      `json:"grew"` // num_shards was raised in this write
}

// read gets the counted document as it is now.
func (f *Folder) Read(ctx context.Context, id string) (Parent, error) {
	snap, err := f.layout.Counter(f.client, id).Get(ctx)
	if err != nil && status.Code(err) != codes.NotFound {
		return Parent{}, fmt.Errorf("rollup: read %s: %w", id, err)
	}
	return ParentFrom(f.layout, f.layout.Counts(id), snap, time.Now()), nil
}

// aggregation is sum() and count() over id's shards that hold the field of
// count c: one aggregation query. Each count is summed on its own, as a
// query's aggregations all see only the documents that hold every field
// they name, and a shard holds only the counts it was incremented for.
func (f *Folder) aggregation(id, life string, c layout.Count) *firestore.AggregationQuery {
	holding := f.layout.Shards(f.client, id, life).Where(c.Shard, "!=", nil)
	return holding.NewAggregationQuery().WithSum(c.Shard, "sum").WithCount("shards")
}

// sumOf reads count i's aggregation result into s.
func sumOf(res firestore.AggregationResult, s *Sum, i int) error {
	sum, _ := res["sum"].(*firestorepb.Value)
	n, _ := res["shards"].(*firestorepb.Value)
	s.Shards[i] = n.GetIntegerValue()
	switch v := sum.GetValueType().(type) {
	case *firestorepb.Value_IntegerValue:
		s.Values[i] = v.IntegerValue
	case *firestorepb.Value_DoubleValue:
		return fmt.Errorf("%w: sum() is the double %g", ErrSumNotInteger, v.DoubleValue)
	}
	return nil
}

func newSum(at time.Time, counts int) Sum {
	return Sum{At: Precise(at), Values: make([]int64, counts), Shards: make([]int64, counts)}
}

// SumNow sums the shards of id's given life now, at a read time no
// earlier than notBefore (a time the server has passed): its first count
// with one aggregation query, whose result holds at the read time the
// server reports, when the client is built with fsrpc's options, and any
// other counts at that same read time; otherwise at notBefore, as sumAt
// does.
func (f *Folder) SumNow(ctx context.Context, id, life string, notBefore time.Time) (Sum, error) {
	if f.noReadTime.Load() {
		return f.sumAt(ctx, id, life, notBefore)
	}
	counts := f.layout.Counts(id)
	if len(counts) == 0 {
		return Sum{}, fmt.Errorf("rollup: sum of %s: %w", id, layout.ErrUndeclared)
	}
	rctx, readTime := fsrpc.WithReadTime(ctx)
	res, err := f.aggregation(id, life, counts[0]).Get(rctx)
	if err != nil {
		return Sum{}, fmt.Errorf("rollup: sum of %s: %w", id, err)
	}
	at := readTime()
	if at.IsZero() {
		f.noReadTime.Store(true) // a client without the options: read at a chosen time from now on
		return f.sumAt(ctx, id, life, notBefore)
	}
	if Precise(at).Before(notBefore) {
		return f.sumAt(ctx, id, life, notBefore)
	}
	s := newSum(at, len(counts))
	if err := sumOf(res, &s, 0); err != nil {
		return Sum{}, fmt.Errorf("rollup: sum of %s: %w", id, err)
	}
	if err := f.sumRest(ctx, id, life, &s, 1); err != nil { // the other counts at the same read time
		return Sum{}, err
	}
	return s, nil
}

// sumAt sums every count of the shards of id's life at the read time at.
func (f *Folder) sumAt(ctx context.Context, id, life string, at time.Time) (Sum, error) {
	s := newSum(at, len(f.layout.Counts(id)))
	if err := f.sumRest(ctx, id, life, &s, 0); err != nil {
		return Sum{}, err
	}
	return s, nil
}

// sumRest runs the aggregation of each count from the from'th on over id's
// shards, in one read-only transaction at s.At: no shard is locked, and
// every sum holds every shard write committed at or before s.At.
func (f *Folder) sumRest(ctx context.Context, id, life string, s *Sum, from int) error {
	counts := f.layout.Counts(id)
	if from >= len(counts) {
		return nil
	}
	err := f.client.RunTransaction(ctx, func(ctx context.Context, tx *firestore.Transaction) error {
		for i := from; i < len(counts); i++ {
			res, err := f.aggregation(id, life, counts[i]).Transaction(tx).Get(ctx)
			if err != nil {
				return err
			}
			if err := sumOf(res, s, i); err != nil {
				return err
			}
		}
		return nil
	}, firestore.TransactionReadTime(s.At))
	if err != nil {
		return fmt.Errorf("rollup: sum of %s at %s: %w", id, s.At.Format(time.RFC3339Nano), err)
	}
	return nil
}

// zero reports whether every count sums to 0.
func (s Sum) zero() bool {
	for _, v := range s.Values {
		if v != 0 {
			return false
		}
	}
	return true
}

// Write commits the fold s onto p, the counted document as last known,
// once the server's clock has passed p's window (s may be older: a sum
// from an event), raising num_shards to grow if that is more. It writes only the counts
// and tally's bookkeeping, with an update mask, and commits only if the
// document is still exactly p (an update_time precondition makes the write
// a compare-and-set), so the as_of and window checks made on p hold at
// commit, and a write of the app's in between is never overwritten: the
// fold is then stale, and is made again on the document as it now is. It
// creates a missing parent only in the guide layout, and only for shards
// that hold something: an app's document that is gone stays gone.
func (f *Folder) Write(ctx context.Context, id string, p Parent, s Sum, grow int) (Fold, Parent, error) {
	fold := Fold{Counter: id, Before: p.Totals, Sum: s, NumShards: p.NumShards}
	ref := f.layout.Counter(f.client, id)
	docs := f.layout.OnDocs()
	switch {
	case p.Exists && !p.AsOf.Before(s.At):
		return fold, p, nil // a later fold is there already
	case p.Exists && s.At.Before(p.Written.Add(f.window)) && p.Now().Before(p.Written.Add(f.window)):
		return fold, p, fmt.Errorf("rollup: fold %s at %s: %w at %s", id, s.At, ErrTooSoon, p.Written)
	case !p.Exists && (docs || s.zero()):
		p.AsOf = s.At // nothing to hold, as of then
		return fold, p, nil
	case !docs && p.Exists && s.Shards[0] == 0 && (p.Seen || p.Totals[0] != 0):
		// No shard holds the field. If shards are there, the field is most
		// likely wrong; if none is (the counter's shards deleted, by
		// tally delete before its parent), the sum, 0, is the total.
		some, err := f.anyShard(ctx, id, p.Life)
		if err != nil {
			return fold, p, err
		}
		if some {
			return fold, p, fmt.Errorf("rollup: fold %s: %w %q; its total stays %d", id, ErrNoShardField, f.layout.ShardField, p.Totals[0])
		}
	}
	var wr *firestore.WriteResult
	var err error
	counts := f.layout.Counts(id)
	if p.Exists {
		updates := make([]firestore.Update, 0, len(counts)+4)
		for i, c := range counts {
			if docs && s.Shards[i] == 0 {
				continue // no shard holds it: the app's value stays
			}
			updates = append(updates, firestore.Update{FieldPath: firestore.FieldPath{c.Field}, Value: s.Values[i]})
		}
		updates = append(updates, firestore.Update{FieldPath: f.layout.AsOfPath(), Value: s.At})
		if docs {
			updates = append(updates, firestore.Update{FieldPath: f.layout.WrittenPath(), Value: firestore.ServerTimestamp},
				firestore.Update{FieldPath: f.layout.LifePath(), Value: p.Life})
		}
		if p.Legacy {
			updates = append(updates, firestore.Update{Path: layout.FieldLegacy, Value: firestore.Delete})
		}
		if grow > 0 {
			updates = append(updates, firestore.Update{FieldPath: f.layout.NumShardsPath(), Value: int64(grow)})
			fold.NumShards, fold.Grew = grow, true
		}
		wr, err = ref.Update(ctx, updates, firestore.LastUpdateTime(p.Updated))
	} else {
		wr, err = ref.Create(ctx, map[string]any{layout.FieldTotal: s.Values[0], layout.FieldAsOf: s.At})
	}
	switch status.Code(err) {
	case codes.OK:
	case codes.FailedPrecondition, codes.NotFound, codes.AlreadyExists:
		return fold, p, ErrStale
	default:
		return fold, p, fmt.Errorf("rollup: write fold of %s: %w", id, err)
	}
	fold.Wrote, fold.Updated = true, wr.UpdateTime
	totals := slices.Clone(p.Totals)
	if totals == nil {
		totals = make([]int64, len(counts))
	}
	for i := range counts {
		if !docs || s.Shards[i] > 0 {
			totals[i] = s.Values[i]
		}
	}
	since := p.OneSince // the write changed nothing of p's shards but their number, if it grew
	if fold.Grew || since.IsZero() {
		since = wr.UpdateTime
	}
	return fold, Parent{
		Exists: true, Life: p.Life, Updated: wr.UpdateTime, Written: wr.UpdateTime, AsOf: s.At, Totals: totals, NumShards: fold.NumShards,
		Resharding: p.Resharding, OneSince: since, Anchor: wr.UpdateTime, AnchorAt: time.Now(),
	}, nil
}

// anyShard reports whether id has a shard document at all in the given
// life, whatever it holds.
func (f *Folder) anyShard(ctx context.Context, id, life string) (bool, error) {
	refs, err := f.layout.Shards(f.client, id, life).Limit(1).Documents(ctx).GetAll()
	if err != nil {
		return false, fmt.Errorf("rollup: list the shards of %s: %w", id, err)
	}
	return len(refs) > 0, nil
}

// Fold folds id now: it reads the parent, waits out the rest of the window
// if the parent was written within it, sums the shards at the time of that
// read and writes the sum. It is what Reset and Reconcile do; events need
// no such call. A missing parent is ErrNoCounter.
func (f *Folder) Fold(ctx context.Context, id string) (Fold, error) {
	for {
		p, err := f.Read(ctx, id)
		if err != nil {
			return Fold{}, err
		}
		if !p.Exists {
			return Fold{}, fmt.Errorf("rollup: fold %s: %w", id, ErrNoCounter)
		}
		if wait := p.Written.Add(f.window).Sub(p.Anchor); wait > 0 {
			if err := gax.Sleep(ctx, wait+time.Millisecond); err != nil {
				return Fold{}, fmt.Errorf("rollup: fold %s: %w", id, err)
			}
			continue
		}
		s, err := f.sumAt(ctx, id, p.Life, p.Anchor)
		if err != nil {
			return Fold{}, err
		}
		fold, _, err := f.Write(ctx, id, p, s, 0)
		if errors.Is(err, ErrStale) {
			continue
		}
		return fold, err
	}
}
