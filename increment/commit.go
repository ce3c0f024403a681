package increment

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"cloud.google.com/go/firestore"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tallycounters/tally/internal/adder"
	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/core/calendar"
	"github.com/tallycounters/tally/internal/fsrpc"
)

// commitOp is an increment that a vote or an idempotency key goes with.
type commitOp struct {
	Counter string
	Count   core.Count // as core.Layout.Check resolved it
	By      int64
	Voter   string        // uid of the voter, with Vote
	Vote    *bool         // true: add Voter's vote (By +1); false: take it back (By -1)
	Key     string        // scoped id of the idempotency key's record; "" for none
	TTL     time.Duration // how long the key's record answers retries
	Limits  Limits        // on Voter, for a plain step: past one, the answer is 429 and nothing is written
	Once    calendar.Unit // if set, the step counts at most once for Voter in each bucket of this unit
}

// Fields of a key's record.
const (
	fieldResponse = "response"
	fieldCreated  = "created_at"
	fieldRequest  = "request" // what was asked: "by:N", "vote:true" or "vote:false"
)

// asked is what op asks, as a key's record keeps it: the counter and count
// are the record's place already.
func (op commitOp) asked() string {
	switch {
	case op.Vote != nil:
		return fmt.Sprintf("vote:%t", *op.Vote)
	case op.Once != "":
		return fmt.Sprintf("by:%d,once:%s", op.By, op.Once)
	}
	return fmt.Sprintf("by:%d", op.By)
}

// errKeyReused refuses a request whose Idempotency-Key was sent before
// with another request (422, as the IETF Idempotency-Key draft answers):
// the first answer would say something of this one that is not so.
var errKeyReused = errorf(core.Conflict,
	"this Idempotency-Key was sent before with another request (another by or vote): nothing was written; send a new key for a new request")

// errConflict means a precondition of the commit failed: the voter's vote,
// or the key's record, is not as the operation needs it.
var errConflict = errors.New("increment: a precondition failed")

// Commit makes op as one commit, so that it happens whole or not at all: the
// shard increment, the voter's document (created for a vote, deleted when
// it is taken back, each only if it was not, or was, there) and the key's
// record (created, or replacing one past its expiry). A vote costs two
// writes; a key one more. respond builds the answer, which the key's record
// keeps, from the shard and whether the count changed; a retry with the same
// key gets the kept answer and writes nothing. committed is when the
// increment committed (for a retry, when the first did), zero when the
// count did not change or the client cannot tell (one built without
// fsrpc's options). A plain step with a key of a quiet document may go
// into the document itself instead of a shard, its key's record beside
// it (own.go).
func (w *shardWriter) Commit(ctx context.Context, op commitOp, respond func(shard int, changed bool) []byte) (body []byte, committed time.Time, err error) {
	if ownable(op) {
		if body, committed, ok, err := w.commitOwn(ctx, op, respond); ok || err != nil {
			return body, committed, err
		}
	}
	blind, err := w.shards.Blind(ctx, op.Counter, map[string]int64{op.Count.Shard: op.By})
	if err != nil {
		return nil, time.Time{}, err
	}
	if batchable(op) && blind {
		if body, committed, err, done := w.commitGrouped(ctx, op, respond); done {
			return body, committed, err
		}
	}
	return w.commitAlone(ctx, op, blind, respond)
}

// commitAlone is Commit of op in a commit of its own; unless blind, one
// that reads the counter's shards first, and refuses a step past the
// count's edge (adder.Adder.Within).
func (w *shardWriter) commitAlone(ctx context.Context, op commitOp, blind bool, respond func(shard int, changed bool) []byte) (body []byte, committed time.Time, err error) {
	return w.commitRead(ctx, op, blind, respond, readsPerVote)
}

// readsPerVote bounds how often a vote reads its document again because
// it changed between the vote's read and its commit: a fold's write, at
// most once a second, makes that rare; an app that writes the document
// all the time may exhaust it, and the vote is answered 503 (Firestore's
// ABORTED: nothing was written).
const readsPerVote = 5

// commitRead is commitAlone, with reads left of the document for a vote.
func (w *shardWriter) commitRead(ctx context.Context, op commitOp, blind bool, respond func(shard int, changed bool) []byte, reads int) (body []byte, committed time.Time, err error) {
	read, n, c, err := w.prepare(ctx, op)
	if err != nil {
		return nil, time.Time{}, err
	}
	if op.Once != "" {
		// A bucket is the commit's, which is known only once it commits:
		// the step marks every bucket its commit may fall in, and commits
		// within onceSpan, or not at all.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, onceSpan)
		defer cancel()
	}
	for attempt := 0; attempt < 3; attempt++ {
		body, committed, err := w.try(ctx, &c, n, blind, read, respond)
		if errors.Is(err, core.ErrPastLimit) {
			return nil, time.Time{}, err
		}
		if !read.IsZero() && status.Code(err) != codes.OK {
			if changed, cerr := w.shards.Changed(ctx, op.Counter, read); cerr != nil || changed {
				return w.commitAgain(ctx, op, blind, respond, reads-1, cerr) // the document changed under the vote: read it again
			}
		}
		switch status.Code(err) {
		case codes.OK:
			return body, committed, nil
		case codes.NotFound:
			if err := w.shards.Gone(ctx, op.Counter); err != nil {
				return nil, time.Time{}, err // the counted document is gone: nothing was written
			}
		case codes.AlreadyExists, codes.FailedPrecondition:
		default:
			return w.refused(ctx, c, err)
		}
		if op.Key != "" {
			kept, at, expired, err := w.keptAnswer(ctx, op, c.life)
			switch {
			case err != nil:
				return nil, time.Time{}, err
			case kept != nil:
				return kept, at, nil // a retry: the first answer, nothing written
			case !expired.IsZero():
				c.replace = expired
				continue
			}
		}
		if op.Vote == nil && op.Once == "" {
			return nil, time.Time{}, fmt.Errorf("increment: commit to %s: %w", op.Counter, errConflict)
		}
		// The vote was already counted, or not there to take back; or the
		// user's step of this bucket was.
		return w.unchanged(ctx, c, respond(-1, false))
	}
	return nil, time.Time{}, fmt.Errorf("increment: commit to %s: %w", op.Counter, errConflict)
}

// prepare is what a commit of op starts from: for a vote on documents,
// when the document was last updated, read now (its record is of the
// document's life: it is made in the life the document has now, not in
// one cached, as the document may have been deleted and created again
// since, and on the condition that it is still as read); the counter's
// shards; and the commit, to a random one of them.
func (w *shardWriter) prepare(ctx context.Context, op commitOp) (read time.Time, n int, c commit, err error) {
	if op.Vote != nil && w.layout.OnDocs() {
		if read, err = w.shards.Fresh(ctx, op.Counter); err != nil {
			return read, 0, c, err
		}
	}
	n, life, fields, err := w.shards.Fields(ctx, op.Counter, op.Count, op.By)
	if err == nil {
		err = adder.EnoughTime(ctx)
	}
	return read, n, commit{op: op, life: life, shard: rand.IntN(max(n, 1)), fields: fields, onceAt: time.Now()}, err
}

// try is one transaction of c (of a counter on n shards), answering
// respond's body, on the condition that the document is as read (if
// read is set); unless blind, one that reads the shards and picks one
// that takes the step within the count's edge first (c.shard is then
// that one).
func (w *shardWriter) try(ctx context.Context, c *commit, n int, blind bool, read time.Time, respond func(int, bool) []byte) ([]byte, time.Time, error) {
	body := respond(c.shard, true)
	tctx, commitTime := fsrpc.WithCommitTime(w.shards.VerifyAt(ctx, c.op.Counter, read))
	err := w.client.RunTransaction(tctx, func(ctx context.Context, tx *firestore.Transaction) error {
		if !blind {
			k, err := w.shards.Within(tx, c.op.Counter, c.life, n, c.shard, map[string]int64{c.op.Count.Shard: c.op.By})
			if err != nil {
				return err
			}
			c.shard, body = k, respond(k, true)
		}
		return w.stage(tx, *c, body)
	})
	return body, commitTime(), err
}

// commitAgain is commitAlone once more, for a vote whose document changed
// between its read and its commit (a fold wrote it, or it was deleted
// and created again): err, if set, is why the document could not be read.
func (w *shardWriter) commitAgain(ctx context.Context, op commitOp, blind bool, respond func(int, bool) []byte, reads int, err error) ([]byte, time.Time, error) {
	switch {
	case err != nil:
		return nil, time.Time{}, err
	case reads == 0:
		return nil, time.Time{}, commitError(opVote, fmt.Errorf("increment: vote on %s: %w", op.Counter,
			status.Error(codes.Aborted, "the document changed between each read of it and the vote's commit")))
	}
	return w.commitRead(ctx, op, blind, respond, reads)
}

// commit is one Commit of op: to shard of the counted document's life,
// the fields of the increment, onceAt the time its once buckets are of,
// and replace the update_time of an expired key's record to replace
// (zero: none).
type commit struct {
	op      commitOp
	life    string
	shard   int
	fields  map[string]any
	onceAt  time.Time
	replace time.Time
}

// kind is what a failure of c's commit is of, for its answer.
func (c commit) kind() int {
	if c.op.Vote != nil || c.op.Once != "" {
		return opVote
	}
	return opKey
}

// stage puts c's writes in tx, answering body: its records (records) and
// the shard's increment.
func (w *shardWriter) stage(tx *firestore.Transaction, c commit, body []byte) error {
	if err := w.records(tx, c, body); err != nil {
		return err
	}
	return tx.Set(w.layout.Shard(w.client, c.op.Counter, c.life, c.shard), c.fields, firestore.MergeAll)
}

// records puts in tx what c writes beside the shard, answering body: the
// limits' spending, the key's record, the once marks, the voter's
// document.
func (w *shardWriter) records(tx *firestore.Transaction, c commit, body []byte) error {
	op := c.op
	if op.Vote == nil && op.Limits.on() {
		if err := w.spend(tx, op, time.Now()); err != nil {
			return err
		}
	}
	if op.Key != "" {
		if err := w.putKey(tx, op, c.life, body, c.replace); err != nil {
			return err
		}
	}
	if op.Once != "" {
		for _, b := range onceBuckets(op.Once, c.onceAt, w.layout.Zone) {
			if err := tx.Create(w.onceMark(op, c.life, b), map[string]any{
				core.FieldExpiresAt: op.Once.Next(b, w.layout.Zone).Add(onceSpan)}); err != nil {
				return err
			}
		}
	}
	if op.Vote != nil {
		voter := w.layout.Voter(w.client, op.Counter, c.life, op.Count.Field, op.Voter)
		var err error
		if *op.Vote {
			err = tx.Create(voter, map[string]any{"at": firestore.ServerTimestamp})
		} else {
			err = tx.Delete(voter, firestore.Exists)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// refused answers a commit that failed for another reason than a
// precondition: past a limit, nothing was written, but a retry of a
// request that was counted before the limit was reached gets its answer.
func (w *shardWriter) refused(ctx context.Context, c commit, err error) ([]byte, time.Time, error) {
	var refusal *core.Error
	if !errors.As(err, &refusal) || refusal.Code != core.TooMany {
		return nil, time.Time{}, commitError(c.kind(), fmt.Errorf("increment: commit to %s: %w", c.op.Counter, err))
	}
	if c.op.Key != "" {
		kept, at, _, kerr := w.keptAnswer(ctx, c.op, c.life)
		switch {
		case errors.Is(kerr, errKeyReused):
			return nil, time.Time{}, kerr
		case kerr == nil && kept != nil:
			return kept, at, nil
		}
	}
	return nil, time.Time{}, err
}

// unchanged answers a vote already counted, or not there to take back, or
// a step of a bucket already counted: with the answer unchanged, which a
// key's record keeps.
func (w *shardWriter) unchanged(ctx context.Context, c commit, unchanged []byte) ([]byte, time.Time, error) {
	if c.op.Key == "" {
		return unchanged, time.Time{}, nil
	}
	err := w.client.RunTransaction(ctx, func(ctx context.Context, tx *firestore.Transaction) error {
		return w.putKey(tx, c.op, c.life, unchanged, c.replace)
	})
	if status.Code(err) == codes.OK {
		return unchanged, time.Time{}, nil
	}
	if kept, at, _, kerr := w.keptAnswer(ctx, c.op, c.life); errors.Is(kerr, errKeyReused) {
		return nil, time.Time{}, kerr
	} else if kerr == nil && kept != nil {
		return kept, at, nil // the same key won meanwhile
	}
	return nil, time.Time{}, commitError(c.kind(), fmt.Errorf("increment: record key for %s: %w", c.op.Counter, err))
}

// putKey writes the key's record, in the counted document's life, holding
// body: a create, or the replacement of the expired record last updated at
// replace.
func (w *shardWriter) putKey(tx *firestore.Transaction, op commitOp, life string, body []byte, replace time.Time) error {
	ref := w.layout.Key(w.client, op.Counter, life, op.Key)
	expires := time.Now().Add(op.TTL)
	if replace.IsZero() {
		return tx.Create(ref, map[string]any{fieldResponse: string(body), fieldRequest: op.asked(), fieldCreated: firestore.ServerTimestamp,
			core.FieldExpiresAt: expires})
	}
	return tx.Update(ref, []firestore.Update{
		{Path: fieldResponse, Value: string(body)},
		{Path: fieldRequest, Value: op.asked()},
		{Path: fieldCreated, Value: firestore.ServerTimestamp},
		{Path: core.FieldExpiresAt, Value: expires},
	}, firestore.LastUpdateTime(replace))
}

// keptAnswer reads the key's record: the answer it keeps while it has not
// expired, with the record's update time, which is the commit time of the
// increment it was written with (for an increment written into the
// document itself, the server time the record was created at, which the
// document's written holds: commitOwn); or the update time of an expired
// one; neither if there is none.
// A record kept for another request than op's is errKeyReused (a record
// from before records kept requests is taken as op's).
func (w *shardWriter) keptAnswer(ctx context.Context, op commitOp, life string) (kept []byte, at, expired time.Time, err error) {
	snap, err := w.layout.Key(w.client, op.Counter, life, op.Key).Get(ctx)
	if status.Code(err) == codes.NotFound {
		return nil, time.Time{}, time.Time{}, nil
	}
	if err != nil {
		return nil, time.Time{}, time.Time{}, fmt.Errorf("increment: read key for %s: %w", op.Counter, err)
	}
	d := snap.Data()
	if until, _ := d[core.FieldExpiresAt].(time.Time); time.Now().Before(until) {
		if asked, ok := d[fieldRequest].(string); ok && asked != op.asked() {
			return nil, time.Time{}, time.Time{}, errKeyReused
		}
		body, _ := d[fieldResponse].(string)
		at := snap.UpdateTime
		if created, ok := d[fieldCreated].(time.Time); ok && inDocument([]byte(body)) {
			at = created
		}
		return []byte(body), at, time.Time{}, nil
	}
	return nil, time.Time{}, snap.UpdateTime, nil
}

// onceSpan bounds the commit of a step counted once per user per bucket:
// it marks every bucket from its start to onceSpan later, so that, however
// late in that span it commits, its bucket is marked; near a bucket's end,
// the next bucket is marked too, and a step of the same user early in it
// is not counted.
const onceSpan = 5 * time.Second

// onceBuckets are the starts of the buckets of u from at to onceSpan later.
func onceBuckets(u calendar.Unit, at time.Time, loc *time.Location) []time.Time {
	var out []time.Time
	for b := u.Start(at, loc); !b.After(at.Add(onceSpan)); b = u.Next(b, loc) {
		out = append(out, b)
	}
	return out
}

// onceMark is the record that op's user stepped op's count in the bucket
// that starts at b: one of the keys' records, whose TTL removes it once
// the bucket is over.
func (w *shardWriter) onceMark(op commitOp, life string, b time.Time) *firestore.DocumentRef {
	sum := sha256.Sum256([]byte("once\x00" + op.Voter + "\x00" + op.Count.Field + "\x00" + string(op.Once) + "\x00" + calendar.BucketKey(b)))
	return w.layout.Key(w.client, op.Counter, life, "once-"+hex.EncodeToString(sum[:]))
}
