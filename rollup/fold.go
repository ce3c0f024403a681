package rollup

import (
	"context"
	"fmt"
	"strconv"

	"cloud.google.com/go/firestore"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// foldChunk bounds the shards one fold transaction moves: each costs two
// writes, and a commit takes at most 500.
const foldChunk = 200

// Fold moves every shard of counter numbered keep or more into shard
// (number mod keep), creating that one with count 0 if need be, and deletes
// it. Each chunk of shards
// moves in one transaction that also brings total and the bookkeeping up to
// date for every shard it touches, so the total never passes through a value
// the shards never had: the events of the move itself are then skipped, or
// add nothing. It returns how many shards it moved.
func (a *Applier) Fold(ctx context.Context, counter string, keep int) (int, error) {
	refs, err := a.layout.Shards(a.client, counter).DocumentRefs(ctx).GetAll()
	if err != nil {
		return 0, fmt.Errorf("rollup: fold %s: %w", counter, err)
	}
	var extra []int
	present := map[int]bool{}
	for _, ref := range refs {
		if n, err := strconv.Atoi(ref.ID); err == nil && strconv.Itoa(n) == ref.ID {
			present[n] = true
			if n >= keep {
				extra = append(extra, n)
			}
		}
	}
	// The shards that take the counts must exist before the move, so that
	// the move's transaction knows their versions.
	for _, r := range extra {
		if k := r % keep; !present[k] {
			_, err := a.layout.Shard(a.client, counter, k).Create(ctx, map[string]any{a.layout.ShardField: int64(0)})
			if err != nil && status.Code(err) != codes.AlreadyExists {
				return 0, fmt.Errorf("rollup: fold %s: create shard %d: %w", counter, k, err)
			}
			present[k] = true
		}
	}
	moved := 0
	for len(extra) > 0 {
		chunk := extra[:min(foldChunk, len(extra))]
		extra = extra[len(chunk):]
		n, err := a.fold(ctx, counter, keep, chunk)
		moved += n
		if err != nil {
			return moved, fmt.Errorf("rollup: fold %s into %d shards: %w", counter, keep, err)
		}
	}
	return moved, nil
}

func (a *Applier) fold(ctx context.Context, counter string, keep int, extra []int) (int, error) {
	parent := a.layout.Counter(a.client, counter)
	moved := 0
	err := a.client.RunTransaction(ctx, func(ctx context.Context, tx *firestore.Transaction) error {
		snap, err := tx.Get(parent)
		if err != nil {
			return err
		}
		st, err := readParent(snap)
		if err != nil {
			return err
		}
		// Read everything first: a transaction writes only after its reads.
		refs := map[int]*firestore.DocumentRef{}
		for _, r := range extra {
			refs[r] = a.layout.Shard(a.client, counter, r)
			refs[r%keep] = a.layout.Shard(a.client, counter, r%keep)
		}
		var all []*firestore.DocumentRef
		for _, ref := range refs {
			all = append(all, ref)
		}
		snaps, err := tx.GetAll(all)
		if err != nil {
			return err
		}
		now := map[int]*firestore.DocumentSnapshot{}
		for i, s := range snaps {
			n, _ := strconv.Atoi(all[i].ID)
			now[n] = s
		}
		moved = 0
		touched := map[int]bool{}
		adds := map[int]int64{}
		for _, r := range extra {
			rs, ks := now[r], now[r%keep]
			if !rs.Exists() {
				continue // moved already
			}
			if !ks.Exists() {
				return fmt.Errorf("shard %d to keep does not exist", r%keep)
			}
			c, err := countOf(rs, a.layout.ShardField)
			if err != nil {
				return err
			}
			// total holds r at its current count, then r as deleted just
			// after its current version, as its delete event will say.
			a.settle(&st, touched, r, applied{Version: precise(rs.UpdateTime), Count: c})
			a.settle(&st, touched, r, applied{Version: precise(rs.UpdateTime).Add(tombstoneGap), Deleted: true})
			adds[r%keep] += c
			if err := tx.Delete(refs[r]); err != nil {
				return err
			}
			moved++
		}
		for k, add := range adds {
			ks := now[k]
			c, err := countOf(ks, a.layout.ShardField)
			if err != nil {
				return err
			}
			// k at its current version, with the count it will have: its
			// event from this move then adds nothing.
			a.settle(&st, touched, k, applied{Version: precise(ks.UpdateTime), Count: c + add})
			if err := tx.Set(refs[k], map[string]any{a.layout.ShardField: firestore.Increment(add)}, firestore.MergeAll); err != nil {
				return err
			}
		}
		if len(touched) == 0 {
			return nil
		}
		data, paths := st.fields(touched)
		return tx.Set(parent, data, firestore.Merge(paths...))
	})
	if status.Code(err) == codes.NotFound {
		return 0, fmt.Errorf("counter %s: %w", counter, ErrNoCounter)
	}
	return moved, err
}

// settle makes total reflect shard n as next, and records it.
func (a *Applier) settle(st *parentState, touched map[int]bool, n int, next applied) {
	st.Total += next.counted() - st.Shards[n].counted()
	st.Shards[n] = next
	touched[n] = true
}
