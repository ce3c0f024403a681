package fold

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"cloud.google.com/go/firestore"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/core/aggregate"
	"github.com/tallycounters/tally/internal/core/rank"
)

// ErrNoShardField means no shard of a counter whose total is not 0 holds
// the shard field: most likely the field is misconfigured
// (TALLY_SHARD_FIELD), and writing the sum, 0, would wipe the total. Nothing
// is written.
var ErrNoShardField = errors.New("no shard holds the shard field")

// ErrStale ends a fold whose view of the parent is out of date: someone
// wrote or deleted it since. Read it again.
var ErrStale = errors.New("parent changed since it was read")

// ErrTooSoon ends a fold whose sum is within the fold spacing of the parent's
// last write: not this fold's to write.
var ErrTooSoon = errors.New("within the fold spacing of the parent's last write")

// Write commits the fold s onto p, the counted document as last known,
// once the server's clock has passed p's window (s may be older: a sum
// from an event), setting num_shards to shards if not 0 (see commit). It writes only the counts
// and tally's bookkeeping, with an update mask, and commits only if the
// document is still exactly p (an update_time precondition makes the write
// a compare-and-set), so the as_of and spacing checks made on p hold at
// commit, and a write of the app's in between is never overwritten: the
// fold is then stale, and is made again on the document as it now is. It
// creates a missing parent only in the guide layout, and only for shards
// that hold something: an app's document that is gone stays gone.
func (f *Folder) Write(ctx context.Context, id string, p core.Parent, s Sum, shards int) (Outcome, core.Parent, error) {
	fold := Outcome{Counter: id, Before: p.Totals, Sum: s, Own: p.Own, NumShards: p.NumShards, AggregatesBefore: p.Aggregates}
	for _, pf := range s.Parts {
		fold.Failed = append(fold.Failed, pf.Failed...)
	}
	w := f.planWrite(id, p, s)
	if done, next, err := f.check(ctx, id, p, s, w, &fold); done {
		return fold, next, err
	}
	var aggregates map[string]any
	if len(w.applied) > 0 {
		aggregates = aggregate.Values(f.layout.Aggregates(id), w.parts)
	}
	times, moved := f.timeUpdates(id, p, s, w.counts, aggregates)
	wr, err := f.commit(ctx, id, p, s, w, shards, times, &fold)
	switch status.Code(err) {
	case codes.OK:
	case codes.FailedPrecondition, codes.NotFound, codes.AlreadyExists:
		return fold, p, ErrStale
	default:
		return fold, p, fmt.Errorf("fold: write fold of %s: %w", id, err)
	}
	fold.Wrote, fold.Updated, fold.Parts = true, wr.UpdateTime, len(w.applied)
	for _, pf := range w.applied {
		fold.Children = append(fold.Children, pf.Children...)
	}
	fold.Aggregates, fold.Unread = aggregates, moved.unread
	next := p
	moved.apply(&next)
	next.Exists, next.Updated, next.Written, next.Parts = true, wr.UpdateTime, wr.UpdateTime, w.parts
	next.Seen, next.Anchor, next.AnchorAt = false, wr.UpdateTime, time.Now()
	next.Ranked = rank.Record(p.Ranked, fold.Moves)
	if w.counts {
		next.AsOf, next.Totals, next.NumShards = s.At, f.totals(id, p, s), fold.NumShards
		next.Present = nil // every count is there now: a field no shard held was written 0
		next.Legacy = false
		if fold.Grew || fold.Shrank || next.OneSince.IsZero() { // the write changed nothing of p's shards but their number
			next.OneSince = wr.UpdateTime
		}
		next.Resharding = next.Resharding || fold.Shrank && fold.NumShards == 1
	}
	return fold, next, nil
}

// writePlan is what a fold s onto p would write: the counts (if s is
// newer), and the parts after s's refolds, those of them applied, and
// whether any was of parts split since p was read.
type writePlan struct {
	counts  bool
	parts   map[string]aggregate.Parts
	applied []aggregate.PartFold
	misfit  bool
}

func (f *Folder) planWrite(id string, p core.Parent, s Sum) writePlan {
	w := writePlan{counts: s.Values != nil && (!p.Exists || p.AsOf.Before(s.At))}
	w.parts, w.applied, w.misfit = aggregate.Merge(p.Parts, s.Parts)
	return w
}

// check decides whether the fold w of s onto p is not to be written, and
// if so (done) what Write returns: the document as it stands, and why.
func (f *Folder) check(ctx context.Context, id string, p core.Parent, s Sum, w writePlan, fold *Outcome) (done bool, next core.Parent, err error) {
	if !p.Exists {
		if f.layout.OnDocs() || s.zero() {
			p.AsOf = s.At // nothing to hold, as of then
			return true, p, nil
		}
		return false, p, nil
	}
	switch {
	case w.misfit:
		return true, p, ErrStale // parts were split since p was read: fold them again
	case p.Seen && !rank.Known(f.layout.Boards(id), p.Ranked):
		return true, p, ErrStale // the cells it is ranked in are not known: read it
	case w.counts && s.Life != p.Life:
		return true, p, ErrStale // a sum of another life's shards: the document was created again since
	case !w.counts && len(w.applied) == 0:
		for _, pf := range s.Parts {
			if pf.Same {
				fold.Children = append(fold.Children, pf.Children...)
			}
		}
		return true, p, nil // a later fold is there already
	case s.At.Before(p.Written.Add(f.spacing)) && p.Now(time.Now()).Before(p.Written.Add(f.spacing)):
		return true, p, fmt.Errorf("fold: fold %s at %s: %w at %s", id, s.At, ErrTooSoon, p.Written)
	case !f.layout.OnDocs() && s.Shards[0] == 0 && len(s.Skipped) == 0 && (p.Seen || p.Totals[0] != 0):
		return f.checkShardField(ctx, id, p)
	}
	return false, p, nil
}

// checkShardField is the check of a counter of the guide layout of which
// no shard holds the shard field. If shards are there, the field is most
// likely wrong: ErrNoShardField, nothing written. If none is (the
// counter's shards deleted, by tally delete before its parent), the sum,
// 0, is the total.
func (f *Folder) checkShardField(ctx context.Context, id string, p core.Parent) (done bool, next core.Parent, err error) {
	some, err := f.anyShard(ctx, id, p.Life)
	if err != nil {
		return true, p, err
	}
	if some {
		return true, p, fmt.Errorf("fold: fold %s: %w %q; its total stays %d", id, ErrNoShardField, f.layout.ShardField, p.Totals[0])
	}
	return false, p, nil
}

// commit writes the fold w of s onto p, with times (its windows and
// trends): an update of p's fields on the condition that p is unchanged,
// or, in the guide layout, the creation of a missing parent. With counts
// and shards not 0, it sets num_shards to shards; a shrink to one shard
// marks the counter resharding (see core.Layout.OneShard), until
// Reconcile has moved the other shards' counts into shard 0.
func (f *Folder) commit(ctx context.Context, id string, p core.Parent, s Sum, w writePlan, shards int, times []firestore.Update, fold *Outcome) (*firestore.WriteResult, error) {
	ref := f.layout.Counter(f.client, id)
	if !p.Exists {
		data := map[string]any{core.FieldTotal: s.Values[0], core.FieldAsOf: s.At}
		setPaths(data, times)
		return ref.Create(ctx, data)
	}
	updates := f.countUpdates(id, p, s, w.counts)
	updates = append(updates, f.partUpdates(id, w.parts, w.applied)...)
	updates = append(updates, times...)
	if f.layout.OnDocs() {
		updates = append(updates, firestore.Update{FieldPath: f.layout.WrittenPath(), Value: firestore.ServerTimestamp},
			firestore.Update{FieldPath: f.layout.LifePath(), Value: p.Life})
	}
	if shards > 0 && w.counts {
		updates = append(updates, firestore.Update{FieldPath: f.layout.NumShardsPath(), Value: int64(shards)})
		fold.NumShards, fold.Grew, fold.Shrank = shards, shards > p.NumShards, shards < p.NumShards
		if shards == 1 && fold.Shrank {
			updates = append(updates, firestore.Update{FieldPath: f.layout.ReshardingPath(), Value: firestore.ServerTimestamp})
		}
	}
	moves, record := rank.Plan(f.layout.Boards(id), id, p.Ranked, p.RankedValues, updates, rank.Key(p.Life, p.Updated))
	if len(moves) > 0 {
		fold.Moves = moves
		return rank.CommitFold(ctx, f.client, ref, append(updates, record...), p.Updated, moves)
	}
	return ref.Update(ctx, updates, firestore.LastUpdateTime(p.Updated))
}

// countUpdates are the fields a fold of the counts s writes: each count's
// sum and as_of. None if counts is false.
func (f *Folder) countUpdates(id string, p core.Parent, s Sum, counts bool) []firestore.Update {
	if !counts {
		return nil
	}
	docs := f.layout.OnDocs()
	values := core.WithOwn(s.Values, p.Own) // the shards' and the document's own: p is what the write compares and sets on
	var updates []firestore.Update
	for i, c := range f.layout.Counts(id) {
		if docs && s.Shards[i] == 0 && p.Holds(i) {
			continue // no shard holds it: the app's value stays, its own part in it (0 is written where there is none)
		}
		updates = append(updates, firestore.Update{FieldPath: firestore.FieldPath{c.Field}, Value: values[i]})
	}
	updates = append(updates, firestore.Update{FieldPath: f.layout.AsOfPath(), Value: s.At})
	if p.Legacy {
		updates = append(updates, firestore.Update{Path: core.FieldLegacy, Value: firestore.Delete})
	}
	return updates
}

// partUpdates are the fields a fold of parts writes: each part refolded,
// and every aggregate of the sources they are of, over parts.
func (f *Folder) partUpdates(id string, parts map[string]aggregate.Parts, applied []aggregate.PartFold) []firestore.Update {
	if len(applied) == 0 {
		return nil
	}
	var updates []firestore.Update
	for _, pf := range applied {
		for key, part := range pf.Parts {
			updates = append(updates, firestore.Update{FieldPath: append(slices.Clone(f.layout.FieldPath(aggregate.FieldParts)), pf.Source, key), Value: part.Stored()})
		}
	}
	aggs := f.layout.Aggregates(id)
	values := aggregate.Values(aggs, parts)
	for _, a := range aggs {
		updates = append(updates, firestore.Update{FieldPath: firestore.FieldPath{a.Field}, Value: values[a.Field]})
	}
	return updates
}

// anyShard reports whether id has a shard document at all in the given
// life, whatever it holds.
func (f *Folder) anyShard(ctx context.Context, id, life string) (bool, error) {
	return f.layout.AnyShard(ctx, f.client, id, life)
}
