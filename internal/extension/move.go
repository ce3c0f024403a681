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

// FieldMovedAt is, in a document's _tally map, when a move last wrote it:
// the same server time as _tally.written when the last write was a move.
const FieldMovedAt = "moved"

// MaxMove is the most shards and partials one move takes: a commit holds
// 500 writes, two of them the document's and a tally shard's.
const MaxMove = 490

// DefaultQuiet is how long after a client's last write of its shard a
// move may take it: the extension's clients show their document plus
// their own shard, with their writes not yet acknowledged applied on
// top, so a shard taken while a write of it is still on its way back to
// its client would show that write twice, once in the document and once
// as pending. A phone on a slow network waits seconds for an answer.
const DefaultQuiet = 10 * time.Second

// MoverOptions configure a Mover.
type MoverOptions struct {
	// Counters are the documents and fields the extension's clients
	// count (TALLY_EXTENSION_COUNTERS): a Mover moves nothing else.
	Counters Counters
	// Spacing is how often a document may be written at most (0:
	// whenever asked).
	Spacing time.Duration
	// Quiet is how long after a client's last write its shard is held
	// (0: none; DefaultQuiet for clients that may still be counting).
	Quiet time.Duration
	// TakeZeros takes shards that hold only zeros (a takeover's tidying):
	// otherwise they stay, as nothing of them is to be moved.
	TakeZeros bool
}

// A Mover moves the extension's shards and partials into their
// documents' fields.
type Mover struct {
	client *firestore.Client
	layout core.Layout
	o      MoverOptions
	max    int
}

// NewMover returns a Mover of client's database, which adds the counts of
// fields that layout declares to the document's tally shard too.
func NewMover(client *firestore.Client, layout core.Layout, o MoverOptions) *Mover {
	return &Mover{client: client, layout: layout, o: o, max: MaxMove}
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
	// (zero if never): the spacing runs from it. MovedLast says whether
	// that write was a move's (or else a fold's).
	Written   time.Time
	MovedLast bool
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
	// holding what is not a declared count, or what the document cannot
	// take.
	Left map[string]error
	// Held are the client shards left for a later move because their
	// client wrote them within the quiet time, by id, with that time;
	// Quiet is when the last of them will have been quiet long enough,
	// on the clock of Read.
	Held  map[string]time.Time
	Quiet time.Time
	// Gone is set for a document of a counted collection (TALLY_COUNTS)
	// that does not exist: tally never creates one, so nothing is moved.
	Gone bool
	// Undeclared is set for a document TALLY_EXTENSION_COUNTERS does not
	// declare: nothing of it is read, made or moved.
	Undeclared bool
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
// serializes with it on the documents both read. A document that
// TALLY_EXTENSION_COUNTERS does not declare is not touched.
func (m *Mover) Move(ctx context.Context, doc string, after time.Time) (Outcome, error) {
	return m.run(ctx, doc, after, true)
}

// Plan is what Move of doc would do now, with nothing written: a dry
// run's.
func (m *Mover) Plan(ctx context.Context, doc string) (Outcome, error) {
	return m.run(ctx, doc, time.Time{}, false)
}

// run is Move, or with write unset, Plan.
func (m *Mover) run(ctx context.Context, doc string, after time.Time, write bool) (Outcome, error) {
	if _, ok := m.o.Counters.Of(doc); !ok {
		return Outcome{Doc: doc, Undeclared: true}, nil
	}
	var out Outcome
	var opts []firestore.TransactionOption
	if !write {
		opts = append(opts, firestore.ReadOnly)
	}
	err := m.client.RunTransaction(ctx, func(ctx context.Context, tx *firestore.Transaction) error {
		var err error
		out, err = m.move(tx, doc, after, write)
		return err
	}, opts...)
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

// move is one attempt of run's transaction: with write unset it reads
// and decides only, whatever the spacing.
func (m *Mover) move(tx *firestore.Transaction, doc string, after time.Time, write bool) (Outcome, error) {
	d, out, err := m.readDoc(tx, doc, after, write)
	if d == nil || err != nil {
		return out, err
	}
	shards, err := tx.Documents(d.ref.Collection(Collection).OrderBy(firestore.DocumentID, firestore.Asc).Limit(m.max + 1)).GetAll()
	if err != nil {
		return out, err
	}
	read := d.read
	if len(shards) > 0 {
		read = shards[0].ReadTime // the query's: every write at or before it is among them
	}
	if out.More = len(shards) > m.max; out.More {
		shards = shards[:m.max]
	}
	t := m.taking(doc, d.counted, d.data, read)
	for _, s := range shards {
		t.add(s)
	}
	out.Moved, out.Shards, out.Partials, out.Left, out.Held, out.Quiet, out.Read = t.moved, t.shards, t.partials, t.left, t.held, t.quietAt, read
	if asOf := t.asOf(); !out.More && asOf.After(out.AsOf) {
		out.AsOf = asOf // nothing of then or before is anywhere but in the document
	}
	if len(t.take) == 0 || !write {
		return out, nil
	}
	return out, m.write(tx, d.ref, d.snap, d.data, d.counted, out, t.take)
}

// docRead is the document a move is of, as its transaction read it.
type docRead struct {
	ref     *firestore.DocumentRef
	snap    *firestore.DocumentSnapshot // nil or not existing if there is none
	data    map[string]any              // nil if there is none
	counted bool                        // TALLY_COUNTS declares it
	read    time.Time
}

// readDoc reads the document of a move, and says whether the move goes
// on to its shards: nil if it is done (the document counted and gone,
// the moves as of after there already, or with write, the spacing not
// over), with the outcome so far.
func (m *Mover) readDoc(tx *firestore.Transaction, doc string, after time.Time, write bool) (*docRead, Outcome, error) {
	out := Outcome{Doc: doc, Moved: Amounts{}, Left: map[string]error{}, Held: map[string]time.Time{}}
	d := &docRead{ref: m.client.Doc(doc), counted: m.layout.OnDocs() && m.layout.Matches(doc)}
	if d.ref == nil {
		return nil, out, fmt.Errorf("%q is not a document's path", doc)
	}
	var err error
	if d.snap, err = tx.Get(d.ref); err != nil && status.Code(err) != codes.NotFound {
		return nil, out, err
	}
	exists := d.snap != nil && d.snap.Exists()
	if d.counted && !exists {
		out.Gone = true
		return nil, out, nil // tally never makes a counted document: its shards wait
	}
	if exists {
		d.data = d.snap.Data()
	}
	book, _ := d.data[core.FieldBookkeeping].(map[string]any)
	out.AsOf, _ = book[FieldMovedAsOf].(time.Time)
	if !after.IsZero() && !out.AsOf.Before(after) {
		return nil, out, nil // covered: a move as of after or later is there
	}
	if d.snap != nil {
		d.read = d.snap.ReadTime
	}
	out.Written = written(book, d.snap)
	movedAt, _ := book[FieldMovedAt].(time.Time)
	w, _ := book[core.FieldWritten].(time.Time)
	out.MovedLast = !movedAt.IsZero() && movedAt.Equal(w)
	if wait := m.wait(book, out.Written, d.read, d.counted); wait > 0 && write {
		out.Wait = wait
		return nil, out, nil
	}
	return d, out, nil
}

// taking starts the decisions of a move of doc (of data, nil if it does
// not exist; counted if TALLY_COUNTS declares it) read at read.
func (m *Mover) taking(doc string, counted bool, data map[string]any, read time.Time) *taking {
	decl, _ := m.o.Counters.Of(doc)
	t := &taking{decl: decl, counted: map[string]bool{}, doc: data, read: read, quiet: m.o.Quiet, zeros: m.o.TakeZeros,
		moved: Amounts{}, left: map[string]error{}, held: map[string]time.Time{}}
	if counted {
		for _, c := range m.layout.Counts(doc) {
			t.counted[c.Field] = true
		}
	}
	return t
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
// written (bookkeeping book) may be written again: the spacing from that
// write; twice the spacing on a document tally also folds (counted) when
// that write was a move, so that moves, however many shards clients
// write, leave every other turn to the fold.
func (m *Mover) wait(book map[string]any, written, read time.Time, counted bool) time.Duration {
	if m.o.Spacing <= 0 || read.IsZero() || written.IsZero() {
		return 0
	}
	spacing := m.o.Spacing
	at, _ := book[FieldMovedAt].(time.Time)
	if w, _ := book[core.FieldWritten].(time.Time); counted && !at.IsZero() && at.Equal(w) {
		spacing *= 2 // moved last: the fold's turn first
	}
	return written.Add(spacing).Sub(read)
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
	updates = append(updates, firestore.Update{FieldPath: firestore.FieldPath{core.FieldBookkeeping, core.FieldWritten}, Value: firestore.ServerTimestamp},
		firestore.Update{FieldPath: firestore.FieldPath{core.FieldBookkeeping, FieldMovedAt}, Value: firestore.ServerTimestamp})
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
