package rollup

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"cloud.google.com/go/firestore"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tallycounters/tally/layout"
)

// Applier folds shard changes into their counter's total, exactly once.
type Applier struct {
	client *firestore.Client
	layout layout.Layout

	// Grow, if its PerShard is set, raises num_shards in a commit whose
	// counter's measured event rate exceeds PerShard per shard.
	Grow GrowPolicy

	// Spacing, if set, keeps Apply from committing sooner than Spacing after
	// the parent's last update, whichever instance made it: Apply waits out
	// the rest, outside any transaction, and tries again. This holds the
	// one-write-per-window bound across instances, up to their clock skew.
	Spacing time.Duration
}

// GrowPolicy says when the rollup adds shards to a busy counter. It never
// removes any.
type GrowPolicy struct {
	PerShard float64       // writes per second one shard should take; 0 disables growth
	Max      int           // most shards growth leads to
	Period   time.Duration // rates are averaged over this long
}

// grow raises st.NumShards when rate exceeds what its shards should take:
// to twice as many, or to as many as the rate needs, up to the maximum.
func (g GrowPolicy) grow(st *parentState, rate float64) {
	n := st.NumShards
	if g.PerShard <= 0 || rate <= g.PerShard*float64(n) || n <= 0 || n >= int64(g.Max) {
		return
	}
	st.NumShards = min(int64(g.Max), max(2*n, int64(math.Ceil(rate/g.PerShard))))
	st.grown = true
}

// errTooSoon ends a transaction attempt that would write within Spacing.
var errTooSoon = errors.New("parent written too recently")

// NewApplier returns an Applier writing through client.
func NewApplier(client *firestore.Client, l layout.Layout) *Applier {
	return &Applier{client: client, layout: l}
}

// Result says what one Apply did.
type Result struct {
	Delta    int64 // added to total
	Applied  int   // changes that were the next link of their shard's history
	Skipped  int   // duplicates and changes already covered
	Repaired int   // shards read to close a gap in their history
	Shards   int   // the parent's num_shards after the commit; 0 if unset
	Grew     bool  // num_shards was raised in this commit
}

// Apply commits changes, all for counter, in one transaction on the parent.
// For each shard the parent records the version and count that total already
// holds. A change that starts from that version is applied; one at or before
// it is skipped; one after a gap makes Apply read the shard and apply what
// total lacks, which covers the missing changes too. An error means nothing
// was committed and the whole batch may be retried.
func (a *Applier) Apply(ctx context.Context, counter string, changes []Change) (Result, error) {
	for {
		res, wait, err := a.Attempt(ctx, counter, changes, 0)
		if wait == 0 {
			return res, err
		}
		if err := sleep(ctx, wait); err != nil {
			return Result{}, fmt.Errorf("rollup: apply to %s: %w", counter, err)
		}
	}
}

// sleep waits d, or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Attempt is one try of Apply. If the parent was written within Spacing, it
// commits nothing and returns how long to wait (with jitter, so that
// instances waiting on one parent do not all wake at once), so that a caller
// can gather more changes meanwhile. rate, if positive, is the counter's
// recent events per second, for Grow.
func (a *Applier) Attempt(ctx context.Context, counter string, changes []Change, rate float64) (Result, time.Duration, error) {
	for _, c := range changes {
		if c.Counter != counter {
			return Result{}, 0, fmt.Errorf("rollup: apply %s: change for counter %s in batch", counter, c.Counter)
		}
	}
	changes = slices.Clone(changes)
	slices.SortStableFunc(changes, func(x, y Change) int {
		return cmp.Or(cmp.Compare(x.Shard, y.Shard), x.version().Compare(y.version()))
	})
	res, wait, err := a.apply(ctx, counter, changes, rate)
	if errors.Is(err, errTooSoon) {
		return Result{}, wait + rand.N(a.Spacing/10+1), nil
	}
	return res, 0, err
}

// apply runs the transaction; on errTooSoon it says how long to wait.
func (a *Applier) apply(ctx context.Context, counter string, changes []Change, rate float64) (Result, time.Duration, error) {
	parent := a.layout.Counter(a.client, counter)
	var res Result
	var wait time.Duration
	err := a.client.RunTransaction(ctx, func(ctx context.Context, tx *firestore.Transaction) error {
		snap, err := tx.Get(parent)
		if err != nil && status.Code(err) != codes.NotFound {
			return err
		}
		if a.Spacing > 0 && snap.Exists() {
			if wait = time.Until(snap.UpdateTime.Add(a.Spacing)); wait > 0 {
				return errTooSoon
			}
		}
		st, err := readParent(snap)
		if err != nil {
			return err
		}
		res = Result{}
		touched := map[int]bool{}
		for _, c := range changes {
			if err := a.step(ctx, &st, &res, touched, c); err != nil {
				return err
			}
		}
		a.Grow.grow(&st, rate)
		res.Shards = int(st.NumShards)
		res.Grew = st.grown
		// Nothing to record, or only zeros for a counter that has no parent
		// (such as shard deletions after the counter was deleted).
		if len(touched) == 0 && !st.grown || !st.Exists && st.Total == 0 {
			return nil
		}
		data, paths := st.fields(touched)
		return tx.Set(parent, data, firestore.Merge(paths...))
	})
	if errors.Is(err, errTooSoon) {
		return Result{}, wait, err
	}
	if err != nil {
		return Result{}, 0, fmt.Errorf("rollup: apply %d changes to %s: %w", len(changes), counter, err)
	}
	return res, 0, nil
}

// step folds one change into st.
func (a *Applier) step(ctx context.Context, st *parentState, res *Result, touched map[int]bool, c Change) error {
	cur, known := st.Shards[c.Shard]
	if known && !c.version().After(cur.Version) {
		res.Skipped++
		return nil
	}
	var next applied
	switch {
	case !st.Exists:
		// No parent: the counter is new, or was deleted while events were
		// in flight. Trust only what the shard holds now.
		var err error
		if next, err = a.repair(ctx, c); err != nil {
			return err
		}
		res.Repaired++
	case c.Before.Exists && known && !cur.Deleted && c.Before.Version.Equal(cur.Version),
		!c.Before.Exists && (!known || cur.Deleted):
		next = applied{Version: c.version(), Count: c.After.Count, Deleted: !c.After.Exists}
		res.Applied++
	default:
		var err error
		if next, err = a.repair(ctx, c); err != nil {
			return err
		}
		res.Repaired++
	}
	if next.Deleted {
		next.Count = 0
	}
	delta := next.counted() - cur.counted()
	st.Total += delta
	res.Delta += delta
	st.Shards[c.Shard] = next
	touched[c.Shard] = true
	return nil
}

// repair reads the shard now, outside the transaction so as not to hold the
// shard against increments. Whatever the read returns is at or past c, so
// recording it covers c and every change before it.
func (a *Applier) repair(ctx context.Context, c Change) (applied, error) {
	snap, err := a.layout.Shard(a.client, c.Counter, c.Shard).Get(ctx)
	if status.Code(err) == codes.NotFound {
		// Deleted after c: at the earliest one step past c's version.
		v := c.version()
		if c.After.Exists {
			v = v.Add(tombstoneGap)
		}
		return applied{Version: v, Deleted: true}, nil
	}
	if err != nil {
		return applied{}, fmt.Errorf("read shard %d: %w", c.Shard, err)
	}
	if snap.UpdateTime.Before(c.version()) {
		return applied{}, fmt.Errorf("read shard %d at %s, older than its event at %s", c.Shard, snap.UpdateTime, c.version())
	}
	n, err := countOf(snap, a.layout.ShardField)
	if err != nil {
		return applied{}, err
	}
	return applied{Version: precise(snap.UpdateTime), Count: n}, nil
}

func countOf(snap *firestore.DocumentSnapshot, field string) (int64, error) {
	v := snap.Data()[field]
	if v == nil {
		return 0, nil // an absent field counts as 0
	}
	n, ok := v.(int64)
	if !ok {
		return 0, fmt.Errorf("shard %s: field %s is %T, not an integer", snap.Ref.Path, field, v)
	}
	return n, nil
}
