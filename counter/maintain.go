package counter

import (
	"context"
	"errors"
	"fmt"

	"cloud.google.com/go/firestore"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tallycounters/tally/layout"
	"github.com/tallycounters/tally/rollup"
)

// Reset sets every shard of id to 0, then folds: when it returns, the total
// is the shards' sum, 0 unless an increment raced the reset. Such an
// increment is counted if it committed after its shard's reset and wiped
// with the shard if before; the total follows the shards either way.
func (c *Client) Reset(ctx context.Context, id string) error {
	if err := c.exists(ctx, id); err != nil {
		return fmt.Errorf("counter: reset %s: %w", id, err)
	}
	refs, err := c.shardRefs(ctx, id)
	if err != nil {
		return fmt.Errorf("counter: reset %s: %w", id, err)
	}
	err = c.bulk(ctx, refs, func(bw *firestore.BulkWriter, ref *firestore.DocumentRef) (*firestore.BulkWriterJob, error) {
		return bw.Set(ref, map[string]any{c.layout.ShardField: int64(0)}, firestore.Merge([]string{c.layout.ShardField}))
	})
	if err != nil {
		return fmt.Errorf("counter: reset %s: %w", id, err)
	}
	fctx, cancel := c.boundFold(ctx)
	defer cancel()
	if _, err := c.folder.Fold(fctx, id); err != nil {
		return fmt.Errorf("counter: reset %s: %w", id, err)
	}
	return nil
}

// exists is nil if id's parent exists, ErrNotFound if not.
func (c *Client) exists(ctx context.Context, id string) error {
	ctx, cancel := c.bound(ctx, 1)
	defer cancel()
	_, err := c.layout.Counter(c.fs, id).Get(ctx)
	if status.Code(err) == codes.NotFound {
		return ErrNotFound
	}
	return err
}

// shardRefs lists id's shard documents.
func (c *Client) shardRefs(ctx context.Context, id string) ([]*firestore.DocumentRef, error) {
	ctx, cancel := c.bound(ctx, listBatches)
	defer cancel()
	return c.layout.Shards(c.fs, id).DocumentRefs(ctx).GetAll()
}

// Reconcile folds id now, so that its total is its shards' sum, and reports
// how far the total had drifted (the total before minus that sum). Shards
// numbered past num_shards (left by an increment that raced a reshard)
// count in the sum; they are then moved into the kept ones, which leaves the
// sum as it is.
func (c *Client) Reconcile(ctx context.Context, id string) (rollup.Drift, error) {
	fctx, cancel := c.boundFold(ctx)
	defer cancel()
	d, err := c.folder.Reconcile(fctx, id)
	if err != nil {
		return rollup.Drift{}, fmt.Errorf("counter: %w", err)
	}
	if d.NumShards == 0 {
		return d, nil
	}
	extra, err := c.extraShards(ctx, id, d.NumShards)
	if err != nil {
		return d, err
	}
	d.Extra = len(extra)
	if len(extra) > 0 {
		if err := c.move(ctx, id, d.NumShards, extra); err != nil {
			return d, err
		}
	}
	return d, nil
}

// ReconcileAll reconciles every counter in the collection, calling report
// for each, and returns the first error after trying them all.
func (c *Client) ReconcileAll(ctx context.Context, report func(rollup.Drift, error)) error {
	lctx, cancel := c.bound(ctx, listBatches)
	refs, err := c.fs.Collection(c.layout.Collection).DocumentRefs(lctx).GetAll()
	cancel()
	if err != nil {
		return fmt.Errorf("counter: list counters: %w", err)
	}
	var first error
	for _, ref := range refs {
		d, err := c.Reconcile(ctx, ref.ID)
		if errors.Is(err, ErrNotFound) {
			continue // deleted meanwhile, or a document without a parent
		}
		if err != nil && first == nil {
			first = err
		}
		report(d, err)
	}
	return first
}

// Delete removes id's shards, its voters' votes and the records of its
// idempotency keys, then the parent. Events still in flight bring nothing back: a
// fold creates a parent only for shards that hold something. Stop
// increments to it first: one racing the delete brings the counter back
// with that increment.
func (c *Client) Delete(ctx context.Context, id string) error {
	if err := c.exists(ctx, id); err != nil {
		return fmt.Errorf("counter: delete %s: %w", id, err)
	}
	for _, sub := range []string{layout.ShardsCollection, layout.VotersCollection, layout.KeysCollection} {
		lctx, cancel := c.bound(ctx, listBatches)
		refs, err := c.layout.Counter(c.fs, id).Collection(sub).DocumentRefs(lctx).GetAll()
		cancel()
		if err != nil {
			return fmt.Errorf("counter: delete %s: list %s: %w", id, sub, err)
		}
		err = c.bulk(ctx, refs, func(bw *firestore.BulkWriter, ref *firestore.DocumentRef) (*firestore.BulkWriterJob, error) {
			return bw.Delete(ref)
		})
		if err != nil {
			return fmt.Errorf("counter: delete %s: %w", id, err)
		}
	}
	dctx, cancel := c.bound(ctx, 1)
	defer cancel()
	if _, err := c.layout.Counter(c.fs, id).Delete(dctx); err != nil {
		return fmt.Errorf("counter: delete %s: %w", id, err)
	}
	return nil
}

// bulk applies op to every ref through one BulkWriter and returns the first
// failure. An AlreadyExists failure (of a create) counts as done.
func (c *Client) bulk(ctx context.Context, refs []*firestore.DocumentRef,
	op func(*firestore.BulkWriter, *firestore.DocumentRef) (*firestore.BulkWriterJob, error)) error {
	ctx, cancel := c.bound(ctx, len(refs)/500+1)
	defer cancel()
	bw := c.fs.BulkWriter(ctx)
	jobs := make([]*firestore.BulkWriterJob, 0, len(refs))
	for _, ref := range refs {
		j, err := op(bw, ref)
		if err != nil {
			bw.End()
			return err
		}
		jobs = append(jobs, j)
	}
	bw.End()
	for _, j := range jobs {
		if _, err := j.Results(); err != nil && status.Code(err) != codes.AlreadyExists {
			return err
		}
	}
	return nil
}
