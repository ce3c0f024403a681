package fold

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"cloud.google.com/go/firestore"
	"cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/core/bytime"
	"github.com/tallycounters/tally/internal/fsrpc"
)

// Every way a fold sums a counter's shards at one read time R is here,
// side by side. Each is exact for the same reason: it is a read at R,
// which sees every shard write committed at or before R and none after,
// with no lock on the shards, so that the sum is the counts at R and
// as_of = R says so.
//
//   - One counter, by aggregation (SumNow, SumAt, sumRest; SumCount for
//     one count, at the read time the server picks): sum() and
//     count() over the shards of the document's life that hold each
//     count's field, one aggregation query a count, in one read-only
//     transaction at R. What every fold uses unless one of the others
//     applies; countsAt is the same at a bucket's start, for windows.
//   - One shard, by key (sumWhole, wholeAt): shard 0 read by its key at R,
//     where the document had one shard already before R (Parent.Whole),
//     so that shard 0 held every count then. It costs one read, as the
//     aggregation does on Firestore, but a read by key costs the same
//     however many documents the database holds, where a query's scan on
//     the emulator grows with them.
//   - A counter's writes, by aggregation (SumWrites): sum() of each
//     shard's count of the writes that added to it, at R, which growth
//     takes a rate in writes a second from.
//   - Many counters, by one query (ReadAll, sumAll): a part of Reconcile
//     reads its documents in one batch and sums all their shards with one
//     query of the shards' collection group, in path order, at R, adding
//     each shard as sum() would (add); a counter whose shards hold what
//     sum() would not add as an integer is left to a fold of its own.

// aggregation is sum() and count() over id's shards that hold the field of
// count c: one aggregation query. Each count is summed on its own, as a
// query's aggregations all see only the documents that hold every field
// they name, and a shard holds only the counts it was incremented for.
func (f *Folder) aggregation(id, life string, c core.Count) *firestore.AggregationQuery {
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

func newSum(at time.Time, life string, counts int) Sum {
	return Sum{At: core.Precise(at), Life: life, Values: make([]int64, counts), Shards: make([]int64, counts)}
}

// SumNow sums the shards of id's given life now, at a read time no
// earlier than notBefore (a time the server has passed): its first count
// with one aggregation query, whose result holds at the read time the
// server reports, when the client is built with fsrpc's options, and any
// other counts at that same read time; otherwise at notBefore, as SumAt
// does.
func (f *Folder) SumNow(ctx context.Context, id, life string, notBefore time.Time) (Sum, error) {
	if f.noReadTime.Load() {
		return f.SumAt(ctx, id, life, notBefore)
	}
	counts := f.layout.Counts(id)
	if len(counts) == 0 {
		return Sum{}, fmt.Errorf("fold: sum of %s: %w", id, core.ErrUndeclared)
	}
	rctx, readTime := fsrpc.WithReadTime(ctx)
	res, err := f.aggregation(id, life, counts[0]).Get(rctx)
	if err != nil {
		return Sum{}, fmt.Errorf("fold: sum of %s: %w", id, err)
	}
	at := readTime()
	if at.IsZero() {
		f.noReadTime.Store(true) // a client without the options: read at a chosen time from now on
		return f.SumAt(ctx, id, life, notBefore)
	}
	if core.Precise(at).Before(notBefore) {
		return f.SumAt(ctx, id, life, notBefore)
	}
	s := newSum(at, life, len(counts))
	if err = sumOf(res, &s, 0); errors.Is(err, ErrSumNotInteger) {
		err = f.sumShards(ctx, id, life, &s, 0) // a fraction, or past int64: shard by shard
	}
	if err != nil {
		return Sum{}, fmt.Errorf("fold: sum of %s: %w", id, err)
	}
	if err := f.sumRest(ctx, id, life, &s, 1); err != nil { // the other counts at the same read time
		return Sum{}, err
	}
	return s, nil
}

// SumCount is count c of id's shards of life now, by one aggregation at
// the read time the server picks (the Go client's Sum).
func (f *Folder) SumCount(ctx context.Context, id, life string, c core.Count) (int64, error) {
	res, err := f.aggregation(id, life, c).Get(ctx)
	if err != nil {
		return 0, err
	}
	s := Sum{Values: make([]int64, 1), Shards: make([]int64, 1)}
	if err := sumOf(res, &s, 0); !errors.Is(err, ErrSumNotInteger) {
		return s.Values[0], err
	}
	counts := f.layout.Counts(id)
	full := Sum{Values: make([]int64, len(counts)), Shards: make([]int64, len(counts))} // as of now: no read time
	i := slices.IndexFunc(counts, func(x core.Count) bool { return x == c })
	if err := f.sumShards(ctx, id, life, &full, i); err != nil {
		return 0, err
	}
	return full.Values[i], nil
}

// SumAt sums every count of the shards of id's life at the read time at.
func (f *Folder) SumAt(ctx context.Context, id, life string, at time.Time) (Sum, error) {
	s := newSum(at, life, len(f.layout.Counts(id)))
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
	var redo []int
	err := f.client.RunTransaction(ctx, func(ctx context.Context, tx *firestore.Transaction) error {
		redo = redo[:0]
		for i := from; i < len(counts); i++ {
			res, err := f.aggregation(id, life, counts[i]).Transaction(tx).Get(ctx)
			if err != nil {
				return err
			}
			if err := sumOf(res, s, i); errors.Is(err, ErrSumNotInteger) {
				redo = append(redo, i)
			} else if err != nil {
				return err
			}
		}
		return nil
	}, firestore.TransactionReadTime(s.At))
	for _, i := range redo {
		if err == nil {
			err = f.sumShards(ctx, id, life, s, i)
		}
	}
	if err != nil {
		return fmt.Errorf("fold: sum of %s at %s: %w", id, s.At.Format(time.RFC3339Nano), err)
	}
	return nil
}

// sumShards is count i of id's shards of life at s.At, added shard by
// shard, for when sum() is no integer: a shard that holds no integer, or
// whose count would take the sum past int64, is skipped and recorded in
// s.Skipped; the sum is exact over the others. The shards are added in
// the order of their counts (the query's own, which needs no index of
// its own), so which is skipped does not vary. One read a shard that
// holds the count, in one read-only transaction at s.At (now, if zero).
func (f *Folder) sumShards(ctx context.Context, id, life string, s *Sum, i int) error {
	c := f.layout.Counts(id)[i]
	q := f.layout.Shards(f.client, id, life).Where(c.Shard, "!=", nil)
	opts := []firestore.TransactionOption{firestore.ReadOnly}
	if !s.At.IsZero() {
		opts = append(opts, firestore.TransactionReadTime(s.At))
	}
	return f.client.RunTransaction(ctx, func(ctx context.Context, tx *firestore.Transaction) error {
		s.Values[i], s.Shards[i] = 0, 0
		return fsrpc.Each(tx.Documents(q), func(snap *firestore.DocumentSnapshot) (bool, error) {
			v, _ := snap.DataAt(c.Shard)
			n, ok := v.(int64)
			switch {
			case !ok:
				s.skip(snap, fmt.Sprintf("%s holds %v, no integer count", c.Shard, v))
			case n > 0 && s.Values[i] > math.MaxInt64-n || n < 0 && s.Values[i] < math.MinInt64-n:
				s.skip(snap, fmt.Sprintf("%s holds %d, which would take the sum past int64", c.Shard, n))
			default:
				s.Values[i] += n
				s.Shards[i]++
			}
			return true, nil
		})
	}, opts...)
}

// skip records a shard a sum could not add.
func (s *Sum) skip(snap *firestore.DocumentSnapshot, why string) {
	if s.Skipped == nil {
		s.Skipped = map[string]string{}
	}
	s.Skipped[core.Relative(snap.Ref)] = why
}

// countsAt sums each count of name's shards of life that a window of w
// needs, at the read time at: one aggregation each, in one read-only
// transaction.
func (f *Folder) countsAt(ctx context.Context, name, life string, at time.Time, w bytime.Fold) ([]int64, error) {
	counts := f.layout.Counts(name)
	vals := make([]int64, len(counts))
	var redo []int
	err := f.client.RunTransaction(ctx, func(ctx context.Context, tx *firestore.Transaction) error {
		redo = redo[:0]
		for i, c := range counts {
			if !w.Windowed(i) {
				continue
			}
			res, err := f.aggregation(name, life, c).Transaction(tx).Get(ctx)
			if err != nil {
				return err
			}
			s := Sum{Values: vals, Shards: make([]int64, len(counts))}
			if err := sumOf(res, &s, i); errors.Is(err, ErrSumNotInteger) {
				redo = append(redo, i)
			} else if err != nil {
				return err
			}
		}
		return nil
	}, firestore.ReadOnly, firestore.TransactionReadTime(core.Precise(at)))
	for _, i := range redo {
		if err == nil {
			s := Sum{At: core.Precise(at), Values: vals, Shards: make([]int64, len(counts))}
			err = f.sumShards(ctx, name, life, &s, i)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("fold: counts of %s at %s: %w", name, at.Format(time.RFC3339Nano), err)
	}
	return vals, nil
}

// sumWhole is the sum of id's counts at the read time at, for a fold onto
// p: shard 0's, read by key, where it held them all (wholeAt); otherwise
// the aggregation's (SumAt). Both cost one read on Firestore; a read by
// key costs the same however many documents the database holds, where a
// query's scan on the emulator grows with them.
func (f *Folder) sumWhole(ctx context.Context, id string, p core.Parent, at time.Time) (Sum, error) {
	if s, ok, err := f.wholeAt(ctx, id, p, at); err != nil || ok {
		return s, err
	}
	return f.SumAt(ctx, id, p.Life, at)
}

// wholeAt reads shard 0 of id's life by its key at the read time at, as
// the sum of its counts, if p had one shard already before at
// (Parent.Whole), so that shard 0 held the whole counts then: false if p
// did not, or shard 0 holds a count that is no integer (let the
// aggregation say what it holds).
func (f *Folder) wholeAt(ctx context.Context, id string, p core.Parent, at time.Time) (Sum, bool, error) {
	if !p.Whole(f.layout, f.defaults, at) {
		return Sum{}, false, nil
	}
	s := newSum(at, p.Life, len(f.layout.Counts(id)))
	ref := f.layout.Shard(f.client, id, p.Life, 0)
	var snap *firestore.DocumentSnapshot
	err := f.client.RunTransaction(ctx, func(ctx context.Context, tx *firestore.Transaction) error {
		var err error
		if snap, err = tx.Get(ref); status.Code(err) == codes.NotFound {
			return nil
		}
		return err
	}, firestore.ReadOnly, firestore.TransactionReadTime(s.At))
	if err != nil {
		return Sum{}, false, fmt.Errorf("fold: shard 0 of %s at %s: %w", id, s.At.Format(time.RFC3339Nano), err)
	}
	if snap == nil || !snap.Exists() {
		return s, true, nil // no shard: nothing counted
	}
	return s, s.add(f.layout.Counts(id), snap), nil
}

// add adds a shard's counts into s, as sum() and count() over the shards
// holding each would: false if one is no integer, or the sum passes int64.
func (s *Sum) add(counts []core.Count, snap *firestore.DocumentSnapshot) bool {
	for i, c := range counts {
		v, err := snap.DataAt(c.Shard)
		if err != nil || v == nil {
			continue
		}
		n, ok := v.(int64)
		if !ok || n > 0 && s.Values[i] > math.MaxInt64-n || n < 0 && s.Values[i] < math.MinInt64-n {
			return false
		}
		s.Values[i] += n
		s.Shards[i]++
	}
	return true
}

// sumAll adds each shard of the documents in known, of their lives, into
// their sums, at the read time at: one query of the shards' collection
// group, ordered by path, from the document first on, to past the
// document last. It returns the names whose shards' values it could not
// add up as aggregation would.
func (f *Folder) sumAll(ctx context.Context, first, last string, known map[string]*Known, at time.Time) (map[string]bool, error) {
	shards, _, _ := f.layout.Subcollections()
	q := f.client.CollectionGroup(shards).OrderBy(firestore.DocumentID, firestore.Asc).StartAt(f.layout.Counter(f.client, first))
	unknown := map[string]bool{}
	err := f.client.RunTransaction(ctx, func(ctx context.Context, tx *firestore.Transaction) error {
		clear(unknown)
		for _, k := range known {
			clear(k.Sum.Values)
			clear(k.Sum.Shards)
			k.Shards = k.Shards[:0]
		}
		return fsrpc.Each(tx.Documents(q), func(snap *firestore.DocumentSnapshot) (bool, error) {
			name, life, n, err := f.layout.ParseShardPath(core.Relative(snap.Ref))
			if err != nil {
				return true, nil // not a counter's shard
			}
			if pathMax(name, last) != last {
				return false, nil
			}
			if k := known[name]; k != nil && life == k.Parent.Life && !unknown[name] {
				k.Shards = append(k.Shards, n)
				unknown[name] = !k.Sum.add(f.layout.Counts(name), snap)
			}
			return true, nil
		})
	}, firestore.ReadOnly, firestore.TransactionReadTime(at))
	if err != nil {
		return nil, fmt.Errorf("fold: sum the shards of %d documents at %s: %w", len(known), at.Format(time.RFC3339Nano), err)
	}
	return unknown, nil
}

// SumWrites is how many writes added to id's shards of life, whatever
// their amounts, at the read time at: sum() of core.FieldWrites.
func (f *Folder) SumWrites(ctx context.Context, id, life string, at time.Time) (int64, error) {
	q := f.layout.Shards(f.client, id, life).NewAggregationQuery().WithSumPath(f.layout.WritesPath(), "w")
	var res firestore.AggregationResult
	err := f.client.RunTransaction(ctx, func(ctx context.Context, tx *firestore.Transaction) (err error) {
		res, err = q.Transaction(tx).Get(ctx)
		return err
	}, firestore.ReadOnly, firestore.TransactionReadTime(at))
	if err != nil {
		return 0, fmt.Errorf("fold: sum the writes of %s at %s: %w", id, at.Format(time.RFC3339Nano), err)
	}
	v, _ := res["w"].(*firestorepb.Value)
	return v.GetIntegerValue(), nil
}

// pathMin and pathMax are the first and the last of two document paths in
// Firestore's order: segment by segment.
func pathMin(a, b string) string {
	if slices.Compare(strings.Split(a, "/"), strings.Split(b, "/")) <= 0 {
		return a
	}
	return b
}

func pathMax(a, b string) string {
	if pathMin(a, b) == a {
		return b
	}
	return a
}
