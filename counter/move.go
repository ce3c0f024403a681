package counter

import (
	"context"
	"fmt"
	"strconv"

	"cloud.google.com/go/firestore"
)

// moveChunk bounds the shards one move transaction takes: each costs a
// read and a delete, and the transaction must fit in one call's Timeout
// on a busy emulator as in Firestore.
const moveChunk = 100

// moveAttempts is how many times a chunk's move is tried: a transaction
// whose commit was cut off by its deadline may or may not have been
// applied, and trying it again is safe, as it reads the shards it moves
// (one moved already is gone) and writes in one commit.
const moveAttempts = 3

// presentShards is one past the highest-numbered shard of id's life, 0
// if it has none: one read.
func (c *Client) presentShards(ctx context.Context, id, life string) (int, error) {
	ctx, cancel := c.bound(ctx, 1)
	defer cancel()
	// Shard ids are numbers, ordered as strings: read them all, as ids
	// only, and take the highest number.
	refs, err := refsOf(ctx, c.layout.Shards(c.fs, id, life))
	if err != nil {
		return 0, fmt.Errorf("list shards of %s: %w", id, err)
	}
	most := 0
	for _, ref := range refs {
		if n, err := strconv.Atoi(ref.ID); err == nil && strconv.Itoa(n) == ref.ID && n+1 > most {
			most = n + 1
		}
	}
	return most, nil
}

// extraShards lists the shards of id's life numbered keep or more.
func (c *Client) extraShards(ctx context.Context, id, life string, keep int) ([]int, error) {
	refs, err := c.shardRefs(ctx, id, life)
	if err != nil {
		return nil, fmt.Errorf("counter: list shards of %s: %w", id, err)
	}
	var extra []int
	for _, ref := range refs {
		if n, err := strconv.Atoi(ref.ID); err == nil && strconv.Itoa(n) == ref.ID && n >= keep {
			extra = append(extra, n)
		}
	}
	return extra, nil
}

// move moves each shard r in extra, of id's life, into shard r mod keep: one transaction
// per chunk reads the shards it removes, deletes them and adds their counts
// to the kept ones with server-side increments. A snapshot sees all of a
// chunk's move or none of it, so every sum of the shards is the same.
func (c *Client) move(ctx context.Context, id, life string, keep int, extra []int) error {
	total := len(extra)
	progress := c.progress(id)
	for len(extra) > 0 {
		chunk := extra[:min(moveChunk, len(extra))]
		var err error
		for range moveAttempts {
			if err = c.moveChunk(ctx, id, life, keep, chunk); err == nil || ctx.Err() != nil {
				break
			}
		}
		if err != nil {
			return fmt.Errorf("counter: move shards of %s into %d: %d of %d moved, every sum unchanged (run it again to move the rest): %w",
				id, keep, total-len(extra), total, err)
		}
		extra = extra[len(chunk):]
		progress("moved %d of %d shards into the %d kept", total-len(extra), total, keep)
	}
	return nil
}

// moveChunk moves the shards chunk of id's life into those kept, in one
// transaction.
func (c *Client) moveChunk(ctx context.Context, id, life string, keep int, chunk []int) error {
	counts := c.layout.Counts(id)
	refs := make([]*firestore.DocumentRef, len(chunk))
	for i, r := range chunk {
		refs[i] = c.layout.Shard(c.fs, id, life, r)
	}
	tctx, cancel := c.bound(ctx, 1)
	err := c.fs.RunTransaction(tctx, func(ctx context.Context, tx *firestore.Transaction) error {
		snaps, err := tx.GetAll(refs)
		if err != nil {
			return err
		}
		adds := map[int]map[string]int64{}
		for i, s := range snaps {
			if !s.Exists() {
				continue // moved already
			}
			k := chunk[i] % keep
			if adds[k] == nil {
				adds[k] = map[string]int64{}
			}
			for _, count := range counts {
				v := s.Data()[count.Shard]
				n, ok := v.(int64)
				if v != nil && !ok {
					return fmt.Errorf("shard %s: field %s is %T, not an integer", s.Ref.ID, count.Shard, v)
				}
				if v != nil {
					adds[k][count.Shard] += n
				}
			}
			if err := tx.Delete(refs[i]); err != nil {
				return err
			}
		}
		for k, add := range adds {
			inc := map[string]any{}
			for f, n := range add {
				inc[f] = firestore.Increment(n)
			}
			if len(inc) == 0 {
				continue
			}
			if err := tx.Set(c.layout.Shard(c.fs, id, life, k), inc, firestore.MergeAll); err != nil {
				return err
			}
		}
		return nil
	})
	cancel()
	return err
}
