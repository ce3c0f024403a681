package increment

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"cloud.google.com/go/firestore"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tallycounters/tally/internal/adder"
	"github.com/tallycounters/tally/internal/fsrpc"
)

// Group commit of votes and keyed steps. Those of one counter that reach
// an instance while a commit of such steps is in flight go together in
// the next commit (adder.Batched): one shard write for all, with each
// one's vote or key record in that commit, so each is answered with that
// commit's time, and its key's record keeps its own answer. The commit is
// conditioned as each alone would be (a vote created only if absent,
// taken back only if present, a key recorded only if new); if any
// condition fails nothing is written, and each commits on its own as
// before (commitAlone), which tells a vote already counted from a new one.
// A step alone in its batch commits on its own, as the batch's write; one
// whose record another in the batch writes (a second press of one user, a
// retry of one key) commits on its own after the batch.
// Steps with per-user limits or counted once per bucket always do.

// grouped is a step in a batch, and what became of it.
type grouped struct {
	op      commitOp
	respond func(shard int, changed bool) []byte
	alone   bool // it is to commit on its own, after its batch

	// Its answer, once its batch committed, or it committed alone as
	// its batch's write.
	done      bool
	body      []byte
	committed time.Time
	err       error
}

// batchable reports whether op may go in a batch.
func batchable(op commitOp) bool { return op.Once == "" && !op.Limits.on() }

// commitGrouped commits op in a batch: done is false where it is to
// commit on its own.
func (w *shardWriter) commitGrouped(ctx context.Context, op commitOp, respond func(int, bool) []byte) (body []byte, committed time.Time, err error, done bool) {
	if err := adder.EnoughTime(ctx); err != nil {
		return nil, time.Time{}, err, true
	}
	g := &grouped{op: op, respond: respond}
	_, committed, err = w.shards.Batched(ctx, "records\x00"+op.Counter, op.Count.Shard, op.By, g,
		func(ctx context.Context, items []any, by map[string]int64) (int, time.Time, error) {
			return w.commitBatch(ctx, op.Counter, items, by)
		})
	switch {
	case g.done:
		return g.body, g.committed, g.err, true
	case g.alone:
		return nil, time.Time{}, nil, false
	case err != nil:
		return nil, time.Time{}, commitError(commit{op: op}.kind(), fmt.Errorf("increment: commit to %s: %w", op.Counter, err)), true
	}
	return g.body, committed, nil, true
}

// commitBatch commits the steps items of counter id, adding by to one
// shard, in one commit; it marks alone those that are to commit on their
// own.
func (w *shardWriter) commitBatch(ctx context.Context, id string, items []any, by map[string]int64) (int, time.Time, error) {
	var in []*grouped
	records := map[string]bool{}
	for _, it := range items {
		g := it.(*grouped)
		rs := recordsOf(g.op)
		if slices.ContainsFunc(rs, func(r string) bool { return records[r] }) {
			g.alone = true
			by[g.op.Count.Shard] -= g.op.By
			continue
		}
		for _, r := range rs {
			records[r] = true
		}
		in = append(in, g)
	}
	if len(in) == 1 { // alone, as the batch's write: what comes meanwhile waits for it
		g := in[0]
		g.body, g.committed, g.err = w.commitAlone(ctx, g.op, true, g.respond) // blind: only such are batched
		g.done = true
		return 0, g.committed, nil
	}
	var read time.Time // votes are made in the life the document has now (see commitAlone)
	if w.layout.OnDocs() && slices.ContainsFunc(in, func(g *grouped) bool { return g.op.Vote != nil }) {
		var err error
		if read, err = w.shards.Fresh(ctx, id); err != nil {
			return 0, time.Time{}, err
		}
	}
	n, life, fields, err := w.shards.FieldsOf(ctx, id, by)
	if err != nil {
		return 0, time.Time{}, err
	}
	shard := rand.IntN(n)
	for _, g := range in {
		g.body = g.respond(shard, true)
	}
	cctx, commitTime := fsrpc.WithCommitTime(w.shards.VerifyAt(ctx, id, read))
	err = w.client.RunTransaction(cctx, func(ctx context.Context, tx *firestore.Transaction) error {
		for _, g := range in {
			if err := w.records(tx, commit{op: g.op, life: life}, g.body); err != nil {
				return err
			}
		}
		return tx.Set(w.layout.Shard(w.client, id, life, shard), fields, firestore.MergeAll)
	})
	switch status.Code(err) {
	case codes.OK:
		return shard, commitTime(), nil
	case codes.NotFound:
		if gone := w.shards.Gone(ctx, id); gone != nil {
			for _, g := range in { // the counted document is gone: nothing was written
				g.err, g.done = gone, true
			}
			return shard, time.Time{}, nil
		}
		fallthrough
	case codes.AlreadyExists, codes.FailedPrecondition:
		for _, g := range in {
			g.alone = true // nothing was written: each commits on its own
		}
		return shard, time.Time{}, nil
	}
	return shard, time.Time{}, err
}

// recordsOf names the records op writes beside the shard: its key's,
// and its voter's vote.
func recordsOf(op commitOp) []string {
	var rs []string
	if op.Key != "" {
		rs = append(rs, "key\x00"+op.Key)
	}
	if op.Vote != nil {
		rs = append(rs, "vote\x00"+op.Count.Field+"\x00"+op.Voter)
	}
	return rs
}
