// Package lives keeps every increment of a counted document in the life
// the document has when the increment commits.
//
// A document of the app's that is deleted and created again begins a new
// life (package core, life.go), whose shards are its own. An Increment
// instance learns a document's life from a read it caches (package
// adder), so for a while after the document is created again its
// increments still go to the earlier life's shards, which no fold of the
// new life sums. They belong to the new life: they committed after it
// began.
//
// Move moves them. Of the earlier life's shards, what was committed after
// the new life began at B is, at any read time R, S(R) - S(B): their sum
// at R less their sum at B, read at that past time. A move adds what of
// it was not moved yet to the new life's shard 0, and records in the
// earlier life's document ({document}/lives/{life}) the new life it moves
// into, S(B), how much it has moved, and as of which R, in one transaction
// that holds only if the document still has that life and no move as of
// a later R was recorded. Each increment is so moved once, by whichever
// Rollup instance gets there first, however often its event is
// delivered; the new life's folds then sum it as any increment, and its
// shard write's event brings a fold.
//
// What an earlier life took after the document was deleted and before it
// was created again is counted nowhere: no document was there to count
// it. S(B) must be read within the hour Firestore reads back (without
// point-in-time recovery): an increment that stale, whose earlier life no
// move has followed yet, can no longer be told apart, and is reported.
package lives

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"cloud.google.com/go/firestore"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tallycounters/tally/internal/adder"
	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/fold"
)

// Retention is how far back Move reads a new life's start: within what
// Firestore serves (an hour), with room for the move's own time.
const Retention = 50 * time.Minute

// ErrTooLate means the new life began longer ago than Retention, so what
// an earlier life took after it cannot be told apart any more.
var ErrTooLate = errors.New("lives: the document's life began too long ago to tell an earlier life's increments apart")

// Sums reads the sums of a counted document's shards: a *fold.Folder.
type Sums interface {
	SumAt(ctx context.Context, id, life string, at time.Time) (fold.Sum, error)
	SumNow(ctx context.Context, id, life string, notBefore time.Time) (fold.Sum, error)
}

// Mover moves what earlier lives of counted documents took into the
// lives the documents have.
type Mover struct {
	client *firestore.Client
	layout core.Layout
	sums   Sums
}

// New returns a Mover of the documents of l.
func New(c *firestore.Client, l core.Layout, sums Sums) *Mover {
	return &Mover{client: c, layout: l, sums: sums}
}

// The fields of an earlier life's document that record its moves.
const (
	fieldInto  = "into"  // the life moved into
	fieldBase  = "base"  // by count's shard field: its sum when that life began
	fieldMoved = "moved" // by count's shard field: what was moved into it
	fieldAsOf  = "as_of" // the read time of the last move
)

// record is what an earlier life's document says of its moves.
type record struct {
	into        string
	base, moved map[string]int64
	asOf        time.Time
}

// Move moves into the life the counted document id has now what its
// earlier life from took after that life began, summed at a read time no
// earlier than after (the commit of the write whose event tells of it).
// It answers what it moved, by shard field: nothing if the document is
// gone, or from is not an earlier life of it.
func (m *Mover) Move(ctx context.Context, id, from string, after time.Time) (map[string]int64, error) {
	doc := m.layout.Counter(m.client, id)
	snap, err := doc.Get(ctx)
	if status.Code(err) == codes.NotFound {
		return nil, nil // deleted: no life to take them
	}
	if err != nil {
		return nil, fmt.Errorf("lives: read %s: %w", id, err)
	}
	life := m.layout.LifeIn(snap.Data(), snap.CreateTime)
	began, ok := start(life)
	if was, ok2 := start(from); !ok || !ok2 || !was.Before(began) {
		return nil, nil // its own life, or one after it: a fold's to sum
	}
	if time.Since(began) > Retention {
		return nil, fmt.Errorf("%w: %s, life %s, began at %s", ErrTooLate, id, life, began.Format(time.RFC3339Nano))
	}
	ledger := m.layout.Lives(m.client, id).Doc(from)
	rec, err := m.read(ctx, ledger)
	if err != nil {
		return nil, err
	}
	if rec.into != life {
		base, err := m.sums.SumAt(ctx, id, from, began)
		if err != nil {
			return nil, fmt.Errorf("lives: %s, life %s: %w", id, from, err)
		}
		rec = record{into: life, base: m.byShard(id, base), moved: map[string]int64{}}
	}
	now, err := m.sums.SumNow(ctx, id, from, after)
	if err != nil {
		return nil, fmt.Errorf("lives: %s, life %s: %w", id, from, err)
	}
	return m.commit(ctx, id, doc, ledger, life, rec, now)
}

// commit moves, in one transaction, what now holds of from's increments
// past rec into life: nothing if the document has another life by then,
// or a move as of now or later is recorded.
func (m *Mover) commit(ctx context.Context, id string, doc, ledger *firestore.DocumentRef, life string, rec record, now fold.Sum) (map[string]int64, error) {
	var moved map[string]int64
	err := m.client.RunTransaction(ctx, func(ctx context.Context, tx *firestore.Transaction) error {
		moved = nil
		snap, err := tx.Get(doc)
		if err != nil || m.layout.LifeIn(snap.Data(), snap.CreateTime) != life {
			return ignoreNotFound(err) // deleted, or created again, since: a later move's
		}
		l, err := txRead(tx, ledger)
		if err != nil {
			return err
		}
		if l.into == life {
			if !l.asOf.Before(now.At) {
				return nil // moved as of now or later
			}
			rec = l
		}
		moved = map[string]int64{}
		for f, n := range m.byShard(id, now) {
			if x := n - rec.base[f] - rec.moved[f]; x != 0 {
				moved[f] = x
			}
		}
		if len(moved) == 0 {
			return nil
		}
		total, done := map[string]any{}, map[string]any{}
		for _, f := range slices.Concat(slices.Collect(maps.Keys(rec.base)), slices.Collect(maps.Keys(moved))) {
			total[f], done[f] = rec.base[f], rec.moved[f]+moved[f]
		}
		shard := m.layout.Shard(m.client, id, life, 0)
		if err := tx.Set(shard, adder.ShardFields(m.layout, moved, firestore.Delete, firestore.Delete), firestore.MergeAll); err != nil {
			return err
		}
		return tx.Set(ledger, map[string]any{fieldInto: life, fieldBase: total, fieldMoved: done, fieldAsOf: now.At})
	})
	if err != nil {
		return nil, fmt.Errorf("lives: move %s's earlier increments into life %s: %w", id, life, err)
	}
	return moved, nil
}

// byShard is s's sums by count's shard field.
func (m *Mover) byShard(id string, s fold.Sum) map[string]int64 {
	out := map[string]int64{}
	for i, c := range m.layout.Counts(id) {
		if i < len(s.Values) {
			out[c.Shard] = s.Values[i]
		}
	}
	return out
}

// read reads an earlier life's record of its moves: empty if none.
func (m *Mover) read(ctx context.Context, ledger *firestore.DocumentRef) (record, error) {
	snap, err := ledger.Get(ctx)
	if status.Code(err) == codes.NotFound {
		return record{}, nil
	}
	if err != nil {
		return record{}, fmt.Errorf("lives: read %s: %w", ledger.Path, err)
	}
	return recordOf(snap.Data()), nil
}

// txRead is read, in tx.
func txRead(tx *firestore.Transaction, ledger *firestore.DocumentRef) (record, error) {
	snap, err := tx.Get(ledger)
	if status.Code(err) == codes.NotFound {
		return record{}, nil
	}
	if err != nil {
		return record{}, err
	}
	return recordOf(snap.Data()), nil
}

// recordOf reads a record from its document's data.
func recordOf(data map[string]any) record {
	r := record{base: ints(data[fieldBase]), moved: ints(data[fieldMoved])}
	r.into, _ = data[fieldInto].(string)
	r.asOf, _ = data[fieldAsOf].(time.Time)
	return r
}

// ints reads a map of integers; anything else in it reads as absent.
func ints(v any) map[string]int64 {
	out := map[string]int64{}
	m, _ := v.(map[string]any)
	for k, x := range m {
		if n, ok := x.(int64); ok {
			out[k] = n
		}
	}
	return out
}

// Settled reports whether life began over an hour ago, past Retention:
// no move follows its earlier lives any more, so what they hold may be
// removed (counter's Reconcile does).
func Settled(life string) bool {
	began, ok := start(life)
	return ok && time.Since(began) > time.Hour
}

// start is when a life began: lives are create times in microseconds.
func start(life string) (time.Time, bool) {
	us, err := strconv.ParseInt(life, 10, 64)
	return time.UnixMicro(us), err == nil && life != ""
}

// ignoreNotFound is err, or nil if it says the document is not found.
func ignoreNotFound(err error) error {
	if status.Code(err) == codes.NotFound {
		return nil
	}
	return err
}
