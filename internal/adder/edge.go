package adder

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"cloud.google.com/go/firestore"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/fsrpc"
)

// Counts at the edge. A count is kept within ±core.CountEdge (2^62), so
// that no sum of its shards, nor any write to one, can pass int64. A
// plain step is written blind, with no read, when it cannot take the count
// there: its amount is at most maxBlind, and the count, as the cache last
// read it, is within half the edge, so that only some 2^41 blind steps
// within one cache age (10 s) could carry it from there to the edge.
// Any other step is checked: in its commit's transaction it reads every
// shard of the counter, and is refused, writing nothing, if it would take
// the count, or the shard it is written to, past the edge
// (core.ErrPastLimit). Reads cost what the counter's shards are, and only
// counts of trillions, or steps of millions at once, pay them.

// maxBlind is the largest amount written blind: TALLY_MAX_STEP's bound.
const maxBlind = 1_000_000

// blind reports whether amounts by (by shard field) may be written with
// no read on counter p as cached.
func (p parent) blind(by map[string]int64) bool {
	for f, n := range by {
		if n > maxBlind || n < -maxBlind {
			return false
		}
		if c := p.counts[f]; c > core.CountEdge/2 || c < -core.CountEdge/2 {
			return false
		}
	}
	return true
}

// Blind reports whether the amounts by (by shard field) of counter id,
// as this Adder knows it, may go in a write with no read (a batch, or a
// vote's commit with no look at the shards); if not, their commit must
// check them (Within).
func (a *Adder) Blind(ctx context.Context, id string, by map[string]int64) (bool, error) {
	p, err := a.counts.get(ctx, id)
	if err != nil {
		return false, err
	}
	return p.blind(by), nil
}

// Within reads, in tx, every shard of counter id's life, and picks one of
// the n it may write by (by shard field) to: the one it was given, or
// another where that one would pass the edge. It is core.ErrPastLimit,
// wrapped, if by would take the count past the edge, or no shard can take
// it.
func (a *Adder) Within(tx *firestore.Transaction, id, life string, n, shard int, by map[string]int64) (int, error) {
	snaps, err := tx.Documents(a.layout.Shards(a.client, id, life)).GetAll()
	if err != nil {
		return shard, err
	}
	sums := map[string]int64{}
	held := map[int]map[string]int64{}
	for _, s := range snaps {
		_, _, k, err := a.layout.ParseShardPath(core.Relative(s.Ref))
		if err != nil {
			continue
		}
		held[k] = map[string]int64{}
		for f := range by {
			v, _ := s.DataAt(f)
			c, _ := v.(int64) // a shard of no integer count is none a fold adds
			held[k][f] = c
			sums[f] += c
		}
	}
	for f, b := range by {
		if !core.WithinEdge(sums[f], b) {
			return shard, pastLimit(id, f, sums[f], b)
		}
	}
	fits := func(k int) bool {
		for f, b := range by {
			if !core.WithinEdge(held[k][f], b) {
				return false
			}
		}
		return true
	}
	if fits(shard) {
		return shard, nil
	}
	for _, k := range rand.Perm(n) {
		if fits(k) {
			return k, nil
		}
	}
	return shard, pastLimit(id, "", 0, 0)
}

// pastLimit is core.ErrPastLimit for counter id, by on field f holding c.
func pastLimit(id, f string, c, by int64) error {
	msg := fmt.Sprintf("%s: no shard can take this step without passing ±%d (2^62), the most a count holds. Nothing was written", id, core.CountEdge)
	if f != "" {
		msg = fmt.Sprintf("%s: %d more would take its count of %d past ±%d (2^62), the most a count holds. Nothing was written", id, by, c, core.CountEdge)
	}
	return &core.Error{Code: core.OutOfRange, Message: msg, Err: core.ErrPastLimit}
}

// writeChecked is write, for amounts that may not go blind: one
// transaction that reads the counter's shards, refuses a step past the
// edge, and writes one shard that can take it.
func (a *Adder) writeChecked(ctx context.Context, id string, p parent, by map[string]int64) (shard int, committed time.Time, err error) {
	shard = rand.IntN(p.n)
	cctx, commitTime := fsrpc.WithCommitTime(a.Verify(ctx, id))
	err = a.client.RunTransaction(cctx, func(ctx context.Context, tx *firestore.Transaction) error {
		k, err := a.Within(tx, id, p.life, p.n, shard, by)
		if err != nil {
			return err
		}
		shard = k
		return tx.Set(a.layout.Shard(a.client, id, p.life, shard), a.fields(id, p, by), firestore.MergeAll)
	})
	switch {
	case errors.Is(err, core.ErrPastLimit):
		return shard, time.Time{}, err
	case status.Code(err) == codes.NotFound && a.layout.OnDocs():
		a.counts.forget(id)
		return shard, time.Time{}, noDocument(id)
	case err != nil:
		return shard, time.Time{}, core.Unconfirmed(fmt.Errorf("core: write shard %d of %s: %w", shard, id, err))
	}
	return shard, commitTime(), nil
}
