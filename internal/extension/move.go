package extension

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
)

// FieldMovedAsOf is, in a document's _tally map, the time every write of
// its shards and partials at or before which is in its fields.
const FieldMovedAsOf = "moved_as_of"

// MaxMove is the most shards and partials one move takes: a commit holds
// 500 writes, two of them the document's and a tally shard's.
const MaxMove = 490

// A Mover moves the extension's shards and partials into their
// documents' fields.
type Mover struct {
	client  *firestore.Client
	layout  core.Layout
	spacing time.Duration
	max     int
}

// NewMover returns a Mover of client's database that writes each
// document at most once per spacing (0: whenever asked), and adds the
// counts of fields that layout declares to the document's tally shard
// too.
func NewMover(client *firestore.Client, layout core.Layout, spacing time.Duration) *Mover {
	return &Mover{client: client, layout: layout, spacing: spacing, max: MaxMove}
}

// Outcome is what one Move did.
type Outcome struct {
	Doc string
	// AsOf is the time every write of the document's shards and partials
	// at or before which is in its fields, as far as this move knows;
	// zero if it knows none.
	AsOf time.Time
	// Wait, if set, is how long until the document may be written again:
	// it was written within the spacing, and nothing was moved.
	Wait time.Duration
	// Written is when tally last wrote the document, as the move read it
	// (zero if never): the spacing runs from it.
	Written time.Time
	// More is set when more shards were there than one move takes: move
	// again.
	More bool
	// Read is the move's read time: every write at or before it of the
	// shards and partials it took is in what it moved.
	Read time.Time
	// Moved is what the move added to the document's fields, from Shards
	// shards and Partials partials; Committed its commit time.
	Moved            Amounts
	Shards, Partials int
	Committed        time.Time
	// Left are the shards and partials left alone, by id, with why: one
	// holding what is not a count.
	Left map[string]error
	// Gone is set for a document of a counted collection (TALLY_COUNTS)
	// that does not exist: tally never creates one, so nothing is moved.
	Gone bool
}

// Move moves the shards and partials of doc (a path from the database
// root) into doc's fields, unless doc's moves have covered after already:
// in one transaction, it reads the document and its shards and partials,
// adds each one's amounts to the document's fields (and, for a count that
// TALLY_COUNTS declares, to the document's tally shard 0, so that tally's
// folds, windows, trends and ranks count it), deletes them, and records
// as of when the document holds every shard write (FieldMovedAsOf) and
// when it wrote (_tally.written, the spacing of folds and moves alike).
// A count is so always in exactly one place, the document, a shard or a
// partial, which is what the extension's clients sum; and a move that
// races another mover (a transaction of the extension's own workers)
// serializes with it on the documents both read.
func (m *Mover) Move(ctx context.Context, doc string, after time.Time) (Outcome, error) {
	var out Outcome
	err := m.client.RunTransaction(ctx, func(ctx context.Context, tx *firestore.Transaction) error {
		var err error
		out, err = m.move(tx, doc, after)
		return err
	})
	switch status.Code(err) {
	case codes.OK:
		return out, nil
	case codes.FailedPrecondition, codes.AlreadyExists:
		err = fmt.Errorf("%w: %v", ErrRaced, err)
	}
	return Outcome{Doc: doc}, fmt.Errorf("extension: move into %s: %w", doc, err)
}

// ErrRaced is a move that found its document written since it read it,
// by another mover or a fold: nothing was written; move again.
var ErrRaced = errors.New("the document was written since it was read")

// MoveNow is Move with the commit time known: for reports and tests.
func (m *Mover) MoveNow(ctx context.Context, doc string) (Outcome, error) {
	cctx, committed := fsrpc.WithCommitTime(ctx)
	out, err := m.Move(cctx, doc, time.Time{})
	out.Committed = committed()
	return out, err
}

// move is one attempt of Move's transaction.
func (m *Mover) move(tx *firestore.Transaction, doc string, after time.Time) (Outcome, error) {
	out := Outcome{Doc: doc, Moved: Amounts{}, Left: map[string]error{}}
	ref := m.client.Doc(doc)
	if ref == nil {
		return out, fmt.Errorf("%q is not a document's path", doc)
	}
	snap, err := tx.Get(ref)
	if err != nil && status.Code(err) != codes.NotFound {
		return out, err
	}
	exists := snap != nil && snap.Exists()
	counted := m.layout.OnDocs() && m.layout.Matches(doc)
	if counted && !exists {
		out.Gone = true
		return out, nil // tally never makes a counted document: its shards wait
	}
	var data map[string]any
	if exists {
		data = snap.Data()
	}
	book, _ := data[core.FieldBookkeeping].(map[string]any)
	moved, _ := book[FieldMovedAsOf].(time.Time)
	out.AsOf = moved
	if !after.IsZero() && !moved.Before(after) {
		return out, nil // covered: a move as of after or later is there
	}
	read := time.Time{}
	if snap != nil {
		read = snap.ReadTime
	}
	out.Written = written(book, snap)
	if wait := m.wait(out.Written, read); wait > 0 {
		out.Wait = wait
		return out, nil
	}
	shards, err := tx.Documents(ref.Collection(Collection).OrderBy(firestore.DocumentID, firestore.Asc).Limit(m.max + 1)).GetAll()
	if err != nil {
		return out, err
	}
	if len(shards) > 0 {
		read = shards[0].ReadTime // the query's: every write at or before it is among them
	}
	if out.More = len(shards) > m.max; out.More {
		shards = shards[:m.max]
	}
	take := m.take(doc, counted, shards, &out)
	if len(take) == 0 && !out.More {
		out.AsOf = read // nothing anywhere but the document: it holds every write as of then
		return out, nil
	}
	if out.Read = read; !out.More {
		out.AsOf = read
	}
	return out, m.write(tx, ref, snap, data, counted, out, take)
}

// take adds to out what of shards is moved, and says what is left and
// why: each shard's and partial's amounts, unless one holds what is not
// a count, or a fraction of a count that TALLY_COUNTS declares. It
// returns the shards and partials moved.
func (m *Mover) take(doc string, counted bool, shards []*firestore.DocumentSnapshot, out *Outcome) []*firestore.DocumentRef {
	var declared []core.Count
	if counted {
		declared = m.layout.Counts(doc)
	}
	var take []*firestore.DocumentRef
	for _, s := range shards {
		a, err := AmountsOf(s.Ref.ID, s.Data())
		for _, c := range declared {
			if _, frac := a.Of(firestore.FieldPath{c.Field}).(float64); frac && err == nil {
				err = fmt.Errorf("%s holds a fraction, and tally counts %s in whole numbers", c.Field, c.Field)
			}
		}
		if err == nil {
			err = out.Moved.Add(a)
		}
		if err != nil {
			out.Left[s.Ref.ID] = err
			continue
		}
		take = append(take, s.Ref)
		if _, partial, _ := Owner(core.Relative(s.Ref)); partial {
			out.Partials++
		} else {
			out.Shards++
		}
	}
	return take
}

// moveSlack bounds how long after tally's recorded write (_tally.written)
// the document's update time is taken as that write's own: a server
// timestamp that the emulator sets as a commit arrives, before the
// commit waits for its locks (seconds, under contention), where Firestore
// sets it to the commit's time.
const moveSlack = 5 * time.Second

// written is when tally last wrote the document of bookkeeping book, as
// snap read it: its update time, the commit's own, where that is at most
// moveSlack after the write tally recorded (so its own, or the app's
// just after, which only waits longer); else the time recorded, so that
// an app that writes the document often never holds a move back for
// more than moveSlack. Zero if tally never wrote it.
func written(book map[string]any, snap *firestore.DocumentSnapshot) time.Time {
	w, _ := book[core.FieldWritten].(time.Time)
	if w.IsZero() || snap == nil || !snap.Exists() {
		return w
	}
	if u := snap.UpdateTime; !u.Before(w) && u.Sub(w) <= moveSlack {
		return u
	}
	return w
}

// wait is how long, from read, until a document tally last wrote at
// written may be written again: the spacing from that write.
func (m *Mover) wait(written, read time.Time) time.Duration {
	if m.spacing <= 0 || read.IsZero() || written.IsZero() {
		return 0
	}
	return written.Add(m.spacing).Sub(read)
}

// write puts out's move in tx: the document's fields and bookkeeping, the
// tally shard of its declared counts, and the deletes of take.
func (m *Mover) write(tx *firestore.Transaction, ref *firestore.DocumentRef, snap *firestore.DocumentSnapshot, data map[string]any, counted bool, out Outcome, take []*firestore.DocumentRef) error {
	var updates []firestore.Update
	for _, p := range out.Moved.Paths() {
		updates = append(updates, firestore.Update{FieldPath: p, Value: firestore.Increment(out.Moved.Of(p))})
	}
	if !out.More {
		updates = append(updates, firestore.Update{FieldPath: firestore.FieldPath{core.FieldBookkeeping, FieldMovedAsOf}, Value: out.AsOf})
	}
	updates = append(updates, firestore.Update{FieldPath: firestore.FieldPath{core.FieldBookkeeping, core.FieldWritten}, Value: firestore.ServerTimestamp})
	if counted {
		updates = append(updates, m.trends(core.Relative(ref), snap, out)...)
	}
	// On the condition that the document is as read: the transaction's
	// own guarantee, made plain to every store, so that two movers that
	// read it at once never both write it within the spacing.
	var err error
	if snap != nil && snap.Exists() {
		err = tx.Update(ref, updates, firestore.LastUpdateTime(snap.UpdateTime))
	} else {
		set := map[string]any{}
		for _, u := range updates {
			core.SetAt(set, u.FieldPath, u.Value)
		}
		err = tx.Create(ref, set)
	}
	if err != nil {
		return err
	}
	if counted {
		if err := m.countInTally(tx, core.Relative(ref), data, snap.CreateTime, out.Moved); err != nil {
			return err
		}
	}
	for _, r := range take {
		if err := tx.Delete(r); err != nil {
			return err
		}
	}
	return nil
}

// trends are the writes that weigh, in the trends of the counted
// document of snap, what out moves into its declared counts, at the
// move's read time: the next fold finds them in the counts already, and
// weighs none of them itself.
func (m *Mover) trends(doc string, snap *firestore.DocumentSnapshot, out Outcome) []firestore.Update {
	added := map[string]int64{}
	for _, c := range m.layout.Counts(doc) {
		if v, ok := out.Moved.Of(firestore.FieldPath{c.Field}).(int64); ok {
			added[c.Field] = v
		}
	}
	if len(added) == 0 {
		return nil
	}
	p := core.ParentFrom(m.layout, doc, snap, time.Now())
	return fold.TrendsAdded(m.layout, doc, p, added, out.Read)
}

// countInTally adds, to shard 0 of the counted document doc (of data,
// created at created), what of moved is a count TALLY_COUNTS declares.
func (m *Mover) countInTally(tx *firestore.Transaction, doc string, data map[string]any, created time.Time, moved Amounts) error {
	fields := map[string]any{}
	for _, c := range m.layout.Counts(doc) {
		if v, ok := moved.Of(firestore.FieldPath{c.Field}).(int64); ok {
			fields[c.Shard] = firestore.Increment(v) // take left every fraction alone
		}
	}
	if len(fields) == 0 {
		return nil
	}
	life := m.layout.LifeIn(data, created)
	return tx.Set(m.layout.Shard(m.client, doc, life, 0), fields, firestore.MergeAll)
}
