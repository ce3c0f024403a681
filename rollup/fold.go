package rollup

import (
	"context"
	"errors"
	"fmt"
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

// errStale ends a fold whose view of the parent is out of date: someone
// wrote or deleted it since. Read it again.
var errStale = errors.New("parent changed since it was read")

// errTooSoon ends a fold whose sum is within the window of the parent's
// last write: not this fold's to write.
var errTooSoon = errors.New("within the window of the parent's last write")

// Folder folds counters: it sums a counter's shards at one read time, with
// no lock on them, and writes that sum and time to the parent if the
// parent's as_of is older and its last write is at least a window old.
type Folder struct {
	client     *firestore.Client
	layout     layout.Layout
	window     time.Duration
	noReadTime atomic.Bool // the client reports no aggregation read times
}

// NewFolder returns a Folder for counters in client's database, writing each
// parent at most once per window.
func NewFolder(client *firestore.Client, l layout.Layout, window time.Duration) *Folder {
	return &Folder{client: client, layout: l, window: window}
}

// Sum is sum() over a counter's shards at one read time.
type Sum struct {
	At     time.Time // the read time
	Value  int64
	Shards int64 // shard documents summed: those that hold the shard field
}

// Fold says what one fold did.
type Fold struct {
	Counter   string    `json:"counter"`
	Before    int64     `json:"total_before"` // the parent's total when read
	Sum       Sum       `json:"-"`
	Wrote     bool      `json:"wrote"`   // false: the parent already held this or a later snapshot, or there is nothing to hold
	Updated   time.Time `json:"updated"` // the write's commit time
	NumShards int       `json:"num_shards"`
	Grew      bool      `json:"grew"` // num_shards was raised in this write
}

// read gets the parent as it is now.
func (f *Folder) read(ctx context.Context, id string) (parent, error) {
	snap, err := f.layout.Counter(f.client, id).Get(ctx)
	if err != nil && status.Code(err) != codes.NotFound {
		return parent{}, fmt.Errorf("rollup: read %s: %w", id, err)
	}
	return parentFrom(snap, time.Now()), nil
}

// aggregation is sum() and count() over id's shards that hold the shard
// field: one aggregation query.
func (f *Folder) aggregation(id string) *firestore.AggregationQuery {
	holding := f.layout.Shards(f.client, id).Where(f.layout.ShardField, "!=", nil)
	return holding.NewAggregationQuery().WithSum(f.layout.ShardField, "sum").WithCount("shards")
}

// sumOf reads an aggregation's result into s.
func sumOf(res firestore.AggregationResult, s *Sum) error {
	sum, _ := res["sum"].(*firestorepb.Value)
	n, _ := res["shards"].(*firestorepb.Value)
	s.Shards = n.GetIntegerValue()
	switch v := sum.GetValueType().(type) {
	case *firestorepb.Value_IntegerValue:
		s.Value = v.IntegerValue
	case *firestorepb.Value_DoubleValue:
		return fmt.Errorf("%w: sum() is the double %g", ErrSumNotInteger, v.DoubleValue)
	}
	return nil
}

// sumNow sums id's shards now, at a read time no earlier than notBefore
// (a time the server has passed): with one aggregation query, whose result
// holds at the read time the server reports, when the client is built with
// fsrpc's options; otherwise at notBefore, as sumAt does.
func (f *Folder) sumNow(ctx context.Context, id string, notBefore time.Time) (Sum, error) {
	if f.noReadTime.Load() {
		return f.sumAt(ctx, id, notBefore)
	}
	rctx, readTime := fsrpc.WithReadTime(ctx)
	res, err := f.aggregation(id).Get(rctx)
	if err != nil {
		return Sum{}, fmt.Errorf("rollup: sum of %s: %w", id, err)
	}
	at := readTime()
	if at.IsZero() {
		f.noReadTime.Store(true) // a client without the options: read at a chosen time from now on
		return f.sumAt(ctx, id, notBefore)
	}
	s := Sum{At: precise(at)}
	if s.At.Before(notBefore) {
		return f.sumAt(ctx, id, notBefore)
	}
	if err := sumOf(res, &s); err != nil {
		return Sum{}, fmt.Errorf("rollup: sum of %s: %w", id, err)
	}
	return s, nil
}

// sumAt runs the aggregation over id's shards in a read-only transaction at
// the read time at: no shard is locked, and the sum holds every shard write
// committed at or before at.
func (f *Folder) sumAt(ctx context.Context, id string, at time.Time) (Sum, error) {
	s := Sum{At: precise(at)}
	q := f.aggregation(id)
	err := f.client.RunTransaction(ctx, func(ctx context.Context, tx *firestore.Transaction) error {
		res, err := q.Transaction(tx).Get(ctx)
		if err != nil {
			return err
		}
		return sumOf(res, &s)
	}, firestore.TransactionReadTime(s.At))
	if err != nil {
		return Sum{}, fmt.Errorf("rollup: sum of %s at %s: %w", id, s.At.Format(time.RFC3339Nano), err)
	}
	return s, nil
}

// write commits the fold s onto p, the parent as last known, raising
// num_shards to grow if that is more. It commits only if the parent is
// still exactly p (an update_time precondition makes the write a
// compare-and-set), so the as_of and window checks made on p hold at
// commit. It creates a missing parent only for shards that hold something.
func (f *Folder) write(ctx context.Context, id string, p parent, s Sum, grow int) (Fold, parent, error) {
	fold := Fold{Counter: id, Before: p.Total, Sum: s, NumShards: p.NumShards}
	ref := f.layout.Counter(f.client, id)
	switch {
	case p.Exists && !p.AsOf.Before(s.At):
		return fold, p, nil // a later fold is there already
	case p.Exists && s.At.Before(p.Updated.Add(f.window)):
		return fold, p, fmt.Errorf("rollup: fold %s at %s: %w at %s", id, s.At, errTooSoon, p.Updated)
	case !p.Exists && s.Value == 0:
		p.AsOf = s.At // nothing to hold, as of then
		return fold, p, nil
	case p.Exists && s.Shards == 0 && p.Total != 0:
		return fold, p, fmt.Errorf("rollup: fold %s: %w %q; its total stays %d", id, ErrNoShardField, f.layout.ShardField, p.Total)
	}
	var wr *firestore.WriteResult
	var err error
	if p.Exists {
		updates := []firestore.Update{{Path: layout.FieldTotal, Value: s.Value}, {Path: layout.FieldAsOf, Value: s.At}}
		if p.Legacy {
			updates = append(updates, firestore.Update{Path: layout.FieldLegacy, Value: firestore.Delete})
		}
		if grow > p.NumShards && p.NumShards > 0 {
			updates = append(updates, firestore.Update{Path: layout.FieldNumShards, Value: int64(grow)})
			fold.NumShards, fold.Grew = grow, true
		}
		wr, err = ref.Update(ctx, updates, firestore.LastUpdateTime(p.Updated))
	} else {
		wr, err = ref.Create(ctx, map[string]any{layout.FieldTotal: s.Value, layout.FieldAsOf: s.At})
	}
	switch status.Code(err) {
	case codes.OK:
	case codes.FailedPrecondition, codes.NotFound, codes.AlreadyExists:
		return fold, p, errStale
	default:
		return fold, p, fmt.Errorf("rollup: write fold of %s: %w", id, err)
	}
	fold.Wrote, fold.Updated = true, wr.UpdateTime
	return fold, parent{
		Exists: true, Updated: wr.UpdateTime, AsOf: s.At, Total: s.Value, NumShards: fold.NumShards,
		Anchor: wr.UpdateTime, AnchorAt: time.Now(),
	}, nil
}

// Fold folds id now: it reads the parent, waits out the rest of the window
// if the parent was written within it, sums the shards at the time of that
// read and writes the sum. It is what Reset and Reconcile do; events need
// no such call. A missing parent is ErrNoCounter.
func (f *Folder) Fold(ctx context.Context, id string) (Fold, error) {
	for {
		p, err := f.read(ctx, id)
		if err != nil {
			return Fold{}, err
		}
		if !p.Exists {
			return Fold{}, fmt.Errorf("rollup: fold %s: %w", id, ErrNoCounter)
		}
		if wait := p.Updated.Add(f.window).Sub(p.Anchor); wait > 0 {
			if err := gax.Sleep(ctx, wait+time.Millisecond); err != nil {
				return Fold{}, fmt.Errorf("rollup: fold %s: %w", id, err)
			}
			continue
		}
		s, err := f.sumAt(ctx, id, p.Anchor)
		if err != nil {
			return Fold{}, err
		}
		fold, _, err := f.write(ctx, id, p, s, 0)
		if errors.Is(err, errStale) {
			continue
		}
		return fold, err
	}
}
