package adder

import (
	"context"
	"fmt"
	"maps"
	"time"

	"cloud.google.com/go/firestore"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/fsrpc"
)

// InItself is the shard Add answers for an increment written into the
// counted document itself (core/own.go): no shard holds it.
const InItself = -1

// Stage puts in tx what a commit writes beside an increment written into
// the counted document itself (AddOwn), for the document's life as known:
// an Idempotency-Key's record, say.
type Stage func(tx *firestore.Transaction, life string) error

// AddOwn writes by to count c into the counted document id itself, with
// stage's writes in the same commit, if the document may take it (see
// Add): on what this Adder knows of it, or, if that is nothing, on what
// it reads. ok is false if it did not, with nothing written: the document
// is not quiet, c is ranked (core.Layout.CountedInItself), a window of c
// is past or near its bucket's end (core.Layout.OwnTimeUpdates), the
// document was written since it was known, or a write of stage's found a
// document where it creates one
// (AlreadyExists: a key's record, of a retry); the increment is then for
// a shard. An error is the increment's: the counter is missing, or the
// write's outcome is unknown. committed is the time the write set in the
// document's bookkeeping (written: the server's time of the request, at
// or a little before the commit), which a reader of the document sees: a
// snapshot whose written is at or past it holds the increment.
func (a *Adder) AddOwn(ctx context.Context, id string, c core.Count, by int64, stage Stage) (committed time.Time, ok bool, err error) {
	if a.spacing <= 0 || !a.layout.CountedInItself(id, c) {
		return time.Time{}, false, nil
	}
	if err := EnoughTime(ctx); err != nil {
		return time.Time{}, false, err
	}
	if committed, ok, err := a.addOwn(ctx, id, c, by, stage); ok || err != nil {
		return committed, ok, err
	}
	if _, err := a.counts.get(ctx, id); err != nil {
		return time.Time{}, false, err
	}
	return a.addOwn(ctx, id, c, by, stage)
}

// addOwn writes by to count c into the counted document id itself, if
// this Adder knows the document had no write for the spacing (a.spacing)
// and is writing no other increment of it so: one write, on the
// condition that the document is still as last known, in one commit with
// stage's writes, if any. ok is false if it did not, for any reason that
// leaves nothing written (the document was written or deleted since: it
// is read again; a write of stage's found its document there): the
// increment is then for a shard. An error is the increment's: the
// write's outcome is unknown.
func (a *Adder) addOwn(ctx context.Context, id string, c core.Count, by int64, stage Stage) (committed time.Time, ok bool, err error) {
	p, claimed := a.counts.claimOwn(id, a.spacing)
	if !claimed {
		return time.Time{}, false, nil
	}
	if !p.blind(map[string]int64{c.Shard: by}) {
		a.counts.ownDone(id, c, 0, time.Time{}, core.Parent{}) // near the edge: a shard write reads the count
		return time.Time{}, false, nil
	}
	timed, times, ok := a.layout.OwnTimeUpdates(id, p.times, c, by, time.Now(), a.spacing)
	if !ok {
		a.counts.ownDone(id, c, 0, time.Time{}, core.Parent{}) // its windows move on soon: a fold moves them
		return time.Time{}, false, nil
	}
	doc := a.layout.Counter(a.client, id)
	updates := append([]firestore.Update{
		{FieldPath: firestore.FieldPath{c.Field}, Value: firestore.Increment(by)},
		{FieldPath: a.layout.OwnPath(c), Value: firestore.Increment(by)},
		{FieldPath: a.layout.WrittenPath(), Value: firestore.ServerTimestamp},
	}, timed...)
	cctx, commitTime := fsrpc.WithCommitTime(ctx)
	cctx, requestTime := fsrpc.WithRequestTime(cctx)
	var updated time.Time
	if stage == nil {
		var wr *firestore.WriteResult
		if wr, err = doc.Update(cctx, updates, firestore.LastUpdateTime(p.updated)); err == nil {
			updated = wr.UpdateTime
		}
	} else {
		err = a.client.RunTransaction(cctx, func(_ context.Context, tx *firestore.Transaction) error {
			if err := tx.Update(doc, updates, firestore.LastUpdateTime(p.updated)); err != nil {
				return err
			}
			return stage(tx, p.life)
		})
		updated = commitTime() // the document's new update time is its commit's
	}
	switch status.Code(err) {
	case codes.OK:
	case codes.AlreadyExists: // stage's, of a retry: the document is as known
		a.counts.ownDone(id, c, 0, time.Time{}, core.Parent{})
		return time.Time{}, false, nil
	case codes.FailedPrecondition, codes.NotFound:
		a.counts.forget(id)
		return time.Time{}, false, nil
	default:
		a.counts.forget(id)
		return time.Time{}, false, core.Unconfirmed(fmt.Errorf("core: write %s itself: %w", id, err))
	}
	// The answer's time is the one the write set in the document
	// (_tally.written), which a listener sees: a snapshot whose written is
	// at or past it holds the increment.
	at := requestTime()
	if at.IsZero() {
		at = updated
	}
	if updated.IsZero() { // a client that cannot tell: read the document again
		a.counts.forget(id)
		return at, true, nil
	}
	a.counts.ownDone(id, c, by, updated, times)
	return at, true, nil
}

// claimOwn is what is cached of counter id, if an increment of it may be
// written into the document itself: the document's update time is
// known, and it had no write for at least spacing since, as far as this
// instance knows, and no other such write of this instance is in flight.
// The claim holds until ownDone.
func (s *shardCounts) claimOwn(id string, spacing time.Duration) (parent, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.entries.Peek(id)
	if !ok || e.owning || e.updated.IsZero() || e.quietFor+time.Since(e.learned) < spacing {
		return parent{}, false
	}
	e.owning = true
	s.entries.Add(id, e)
	return e.parent, true
}

// ownDone ends a claim of counter id: if updated is not zero, by was
// written to count c in the document itself, which was last updated then,
// its windows and trends left as times.
func (s *shardCounts) ownDone(id string, c core.Count, by int64, updated time.Time, times core.Parent) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.entries.Peek(id)
	if !ok {
		return
	}
	e.owning = false
	if !updated.IsZero() {
		e.updated, e.learned, e.quietFor = updated, time.Now(), 0
		e.seen = time.Time{}            // the document holds an own part: a fold reads it
		e.counts = maps.Clone(e.counts) // read with no lock by those that got the entry before
		if e.counts == nil {
			e.counts = map[string]int64{}
		}
		e.counts[c.Shard] += by
		e.times = times
	}
	s.entries.Add(id, e)
}
