package counter

import (
	"context"
	"errors"
	"fmt"
	"time"

	"cloud.google.com/go/firestore"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/fold"
	"github.com/tallycounters/tally/internal/fsrpc"
	"github.com/tallycounters/tally/internal/lives"
)

// Reset sets every count of every shard of id to 0, then folds: when it
// returns, each count is the shards' sum, 0 unless an increment raced the
// reset. Such an
// increment is counted if it committed after its shard's reset and wiped
// with the shard if before; the total follows the shards either way.
func (c *Client) Reset(ctx context.Context, id string) error {
	life, err := c.life(ctx, id)
	if err != nil {
		return fmt.Errorf("counter: reset %s: %w", id, err)
	}
	refs, err := c.shardRefs(ctx, id, life)
	if err != nil {
		return fmt.Errorf("counter: reset %s: %w", id, err)
	}
	zero := map[string]any{}
	var fields []firestore.FieldPath
	for _, k := range c.layout.Counts(id) {
		zero[k.Shard] = int64(0)
		fields = append(fields, firestore.FieldPath{k.Shard})
	}
	err = c.bulk(ctx, id, refs, func(bw *firestore.BulkWriter, ref *firestore.DocumentRef) (*firestore.BulkWriterJob, error) {
		return bw.Set(ref, zero, firestore.Merge(fields...))
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
	_, err := c.life(ctx, id)
	return err
}

// life is the life of id's counted document, under which its shards are
// ("" in the guide layout): ErrNotFound if it does not exist. In the
// guide layout a counter exists if its parent does, or only its shards
// (as Google's samples make them).
func (c *Client) life(ctx context.Context, id string) (string, error) {
	life, _, err := c.readLife(ctx, id)
	return life, err
}

// readLife is the life of the counted document id, as life says, and the
// document as read (nil where there is none, in the guide layout).
func (c *Client) readLife(ctx context.Context, id string) (string, *firestore.DocumentSnapshot, error) {
	ctx, cancel := c.bound(ctx, 1)
	defer cancel()
	snap, err := c.layout.Counter(c.fs, id).Get(ctx)
	if status.Code(err) == codes.NotFound {
		if c.layout.OnDocs() {
			return "", nil, ErrNotFound
		}
		if some, err := c.layout.AnyShard(ctx, c.fs, id, ""); err != nil || !some {
			return "", nil, cmpOr(err, ErrNotFound)
		}
		return "", nil, nil
	}
	if err != nil {
		return "", nil, err
	}
	return c.layout.LifeIn(snap.Data(), snap.CreateTime), snap, nil
}

// cmpOr is err, or def if err is nil.
func cmpOr(err, def error) error {
	if err != nil {
		return err
	}
	return def
}

// shardRefs lists the shard documents of id's life.
func (c *Client) shardRefs(ctx context.Context, id, life string) ([]*firestore.DocumentRef, error) {
	ctx, cancel := c.bound(ctx, listBatches)
	defer cancel()
	return refsOf(ctx, c.layout.Shards(c.fs, id, life))
}

// Reconcile folds id now, so that each of its counts is its shards' sum,
// and reports for each how far it had drifted (the count before minus that
// sum). Shards numbered past num_shards (left by an increment that raced a
// reshard) count in the sum; they are then moved into the kept ones, which
// leaves the sum as it is.
func (c *Client) Reconcile(ctx context.Context, id string) ([]Drift, error) {
	if err := c.layout.CheckName(id); err != nil {
		return nil, fmt.Errorf("counter: %w", err)
	}
	ds, err := c.reconcile(ctx, id, nil)
	if err == nil {
		err = c.settleNow(ctx, c.layout.Boards(id))
	}
	return ds, err
}

// reconcile is Reconcile, from what k knows of id, if not nil: the
// document, its shards' sum and which shards exist, as a part of
// Reconcile reads them for all its counters at once (readAndSum).
func (c *Client) reconcile(ctx context.Context, id string, k *fold.Known) ([]Drift, error) {
	fctx, cancel := c.boundFold(ctx)
	defer cancel()
	found, err := c.folder.ReconcileKnown(fctx, id, k)
	if err != nil {
		return nil, fmt.Errorf("counter: %w", err)
	}
	ds := found
	if len(ds) == 0 || ds[0].NumShards == 0 {
		// no count kept in shards (a document of aggregates alone, whose
		// values need not be whole numbers): nothing to move
		return ds, nil
	}
	keep := ds[0].NumShards
	var p core.Parent
	var extra []int
	if k != nil {
		p = k.Parent
		for _, n := range k.Shards {
			if n >= keep {
				extra = append(extra, n)
			}
		}
	} else {
		if p, err = c.parent(ctx, id); err != nil {
			return ds, fmt.Errorf("counter: reconcile %s: %w", id, err)
		}
		if extra, err = c.extraShards(ctx, id, p.Life, keep); err != nil {
			return ds, err
		}
	}
	for i := range ds {
		ds[i].Extra = len(extra)
	}
	if len(extra) > 0 {
		if err := c.move(ctx, id, p.Life, keep, extra); err != nil {
			return ds, err
		}
	}
	if keep == 1 && c.shrunk(p) {
		return ds, c.endResharding(ctx, id)
	}
	return ds, nil
}

// ErrSomeFailed is wrapped by the error of ReconcileAll when it could not
// fold some counters, after folding all the others; report was told which,
// and why.
var ErrSomeFailed = errors.New("some counters could not be folded")

// ReconcileAll reconciles every counter, calling report for each count,
// and for each counter it could not fold, with why. One that cannot be
// folded stops nothing: it goes on with the others, and then returns an
// error wrapping ErrSomeFailed that says how many. On documents it goes
// through every document of the counted collections, and removes the
// shards, votes and keys of counted documents that no longer exist. An
// error that is not ErrSomeFailed means the counters could not be listed,
// or, in a context that ended, not all were tried.
func (c *Client) ReconcileAll(ctx context.Context, report func(Drift, error)) error {
	names, err := c.names(ctx)
	if err != nil {
		return err
	}
	failed := 0
	var known map[string]*fold.Known
	for i, name := range names {
		if ctx.Err() != nil {
			return fmt.Errorf("counter: reconcile: %d of %d counters not tried: %w", len(names)-i, len(names), ctx.Err())
		}
		if i%DefaultPartSize == 0 {
			// A part's counters read, and their shards summed, at once
			// (see RunPart); a counter left out is read on its own.
			known, _ = c.readAndSum(ctx, names[i:min(i+DefaultPartSize, len(names))])
		}
		ds, err := c.reconcile(ctx, name, known[name])
		if errors.Is(err, ErrNotFound) {
			continue // deleted meanwhile, or a document without a parent
		}
		if err != nil {
			failed++
			report(Drift{Counter: name}, err)
			continue
		}
		for _, d := range ds {
			report(d, nil)
		}
	}
	var errs []error
	if failed > 0 {
		errs = append(errs, fmt.Errorf("counter: %d of %d counters: %w", failed, len(names), ErrSomeFailed))
	}
	errs = append(errs, c.RemoveOrphans(ctx), c.SettleRanks(ctx))
	return errors.Join(errs...)
}

// names lists every counter: the parents of the collection of counters,
// or the documents of the counted collections.
func (c *Client) names(ctx context.Context) ([]string, error) {
	ctx, cancel := c.bound(ctx, listBatches)
	defer cancel()
	var names []string
	_, err := c.eachCounter(ctx, nil, time.Time{}, func(name string) error {
		names = append(names, name)
		return nil
	})
	return names, err
}

// RemoveOrphans removes, on documents, what tally keeps under counted
// documents that are gone (their shards, votes and keys), and what it
// keeps of earlier lives of those that were created again: Reconcile does
// so after its counters. In the guide layout a counter's shards are the
// counter, and it does nothing.
func (c *Client) RemoveOrphans(ctx context.Context) error {
	if !c.layout.OnDocs() {
		return nil
	}
	shards, _, _ := c.layout.Subcollections()
	// Ordered by path, a document's shards come one after another: the
	// listing keeps only the last owner it saw, whatever their number.
	last := ""
	q := c.fs.CollectionGroup(shards).Select().OrderBy(firestore.DocumentID, firestore.Asc)
	err := fsrpc.EachDocument(ctx, q, func(s *firestore.DocumentSnapshot) (bool, error) {
		doc, life := c.layout.Owner(s.Ref)
		p := core.Relative(doc)
		if doc == nil || last == p+"/"+life || !c.layout.Matches(p) {
			return true, nil
		}
		last = p + "/" + life
		current, err := c.life(ctx, p)
		switch {
		case errors.Is(err, ErrNotFound):
			err = c.removeSubcollections(ctx, p)
		case err == nil && current != life && lives.Settled(current):
			// an earlier life, once no move follows it (package lives)
			err = c.removeLife(ctx, p, life)
		}
		return err == nil, err
	})
	if err != nil {
		return fmt.Errorf("counter: remove what is left of deleted documents: %w", err)
	}
	return nil
}

// Delete removes id's shards, its voters' votes and the records of its
// idempotency keys, then, in the guide layout, the parent; on documents,
// the counts and tally's bookkeeping from the app's document, which
// stays, or nothing more if it is gone already. Events still in flight
// bring nothing back: a fold creates a parent only for shards that hold
// something, and never an app's document. Stop increments to it first:
// one racing the delete brings the counter back with that increment.
func (c *Client) Delete(ctx context.Context, id string) error {
	if err := c.layout.CheckName(id); err != nil {
		return fmt.Errorf("counter: %w", err)
	}
	err := c.exists(ctx, id)
	if err != nil && !(c.layout.OnDocs() && errors.Is(err, ErrNotFound)) {
		return fmt.Errorf("counter: delete %s: %w", id, err)
	}
	if err := c.removeSubcollections(ctx, id); err != nil {
		return err
	}
	dctx, cancel := c.bound(ctx, 1)
	defer cancel()
	if !c.layout.OnDocs() {
		_, err = c.layout.Counter(c.fs, id).Delete(dctx)
	} else if err == nil {
		updates := []firestore.Update{{Path: core.FieldBookkeeping, Value: firestore.Delete}}
		for _, k := range c.layout.Counts(id) {
			updates = append(updates, firestore.Update{FieldPath: firestore.FieldPath{k.Field}, Value: firestore.Delete})
		}
		_, err = c.layout.Counter(c.fs, id).Update(dctx, updates)
		if status.Code(err) == codes.NotFound {
			err = nil // the app deleted it meanwhile
		}
	}
	if err != nil {
		return fmt.Errorf("counter: delete %s: %w", id, err)
	}
	return nil
}

// removeSubcollections deletes every document of id's shards, voters and
// keys: on documents, those of every life of it.
func (c *Client) removeSubcollections(ctx context.Context, id string) error {
	if !c.layout.OnDocs() {
		return c.removeLife(ctx, id, "")
	}
	lctx, cancel := c.bound(ctx, listBatches)
	lives, err := c.layout.Lives(c.fs, id).DocumentRefs(lctx).GetAll()
	cancel()
	if err != nil {
		return fmt.Errorf("counter: delete %s: list its lives: %w", id, err)
	}
	for _, l := range lives {
		if err := c.removeLife(ctx, id, l.ID); err != nil {
			return err
		}
	}
	return nil
}

// removeLife deletes every document of the shards, voters and keys of one
// life of id, and, on documents, the life's own document.
func (c *Client) removeLife(ctx context.Context, id, life string) error {
	shards, voters, keys := c.layout.Subcollections()
	for _, sub := range []string{shards, voters, keys} {
		lctx, cancel := c.bound(ctx, listBatches)
		refs, err := refsOf(lctx, c.layout.Shards(c.fs, id, life).Parent.Collection(sub))
		cancel()
		if err != nil {
			return fmt.Errorf("counter: delete %s: list %s: %w", id, sub, err)
		}
		err = c.bulk(ctx, id, refs, func(bw *firestore.BulkWriter, ref *firestore.DocumentRef) (*firestore.BulkWriterJob, error) {
			return bw.Delete(ref)
		})
		if err != nil {
			return fmt.Errorf("counter: delete %s: %w", id, err)
		}
	}
	if life == "" {
		return nil // the guide layout's: the counter itself
	}
	// the life's own document: the record of moves out of it (package lives)
	dctx, cancel := c.bound(ctx, 1)
	defer cancel()
	if _, err := c.layout.Lives(c.fs, id).Doc(life).Delete(dctx); err != nil {
		return fmt.Errorf("counter: delete %s: life %s: %w", id, life, err)
	}
	return nil
}

// bulkChunk is how many documents a bulk operation writes within one
// call's Timeout.
const bulkChunk = 500

// bulk applies op to every ref, of id, bulkChunk at a time through a
// BulkWriter, reporting its progress, and returns the first failure, saying how far
// it got. An AlreadyExists failure (of a create) counts as done. Each op
// is one that may be applied again (a delete, a set, a create), so that
// the same command run again finishes what a failure left.
func (c *Client) bulk(ctx context.Context, id string, refs []*firestore.DocumentRef,
	op func(*firestore.BulkWriter, *firestore.DocumentRef) (*firestore.BulkWriterJob, error)) error {
	progress := c.progress(id)
	for done := 0; done < len(refs); {
		chunk := refs[done:min(done+bulkChunk, len(refs))]
		if err := c.bulkChunk(ctx, chunk, op); err != nil {
			return fmt.Errorf("%d of %d documents written (run it again to write the rest): %w", done, len(refs), err)
		}
		done += len(chunk)
		progress("%d of %d documents written", done, len(refs))
	}
	return nil
}

// bulkChunk applies op to each of refs through one BulkWriter, within one
// call's Timeout.
func (c *Client) bulkChunk(ctx context.Context, refs []*firestore.DocumentRef,
	op func(*firestore.BulkWriter, *firestore.DocumentRef) (*firestore.BulkWriterJob, error)) error {
	ctx, cancel := c.bound(ctx, 1)
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

// refsOf lists the documents of coll with a query for their names only:
// one read each, as listing them is, and far quicker on the emulator than
// listing documents, which looks for missing ones too (about 16 s for
// 10,000 shards, against 0.4 s). Documents that are missing but have
// subcollections (a life of a counted document) are listed with
// DocumentRefs instead.
func refsOf(ctx context.Context, coll *firestore.CollectionRef) ([]*firestore.DocumentRef, error) {
	snaps, err := coll.Select().Documents(ctx).GetAll()
	if err != nil {
		return nil, err
	}
	refs := make([]*firestore.DocumentRef, len(snaps))
	for i, s := range snaps {
		refs[i] = s.Ref
	}
	return refs, nil
}
