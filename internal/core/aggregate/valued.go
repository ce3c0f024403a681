package aggregate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"cloud.google.com/go/firestore"
	"google.golang.org/api/iterator"
)

// foldValued refolds the part [lo, hi) of the valued source src of the
// document at id, in the given life, at the read time at (see records.go),
// in a read-only transaction of its own. It reads the part's document;
// each child asked for whose record is older than the child's event it
// reads again at at, and replaces its record (or drops it, if the child
// is gone); the part's counts it aggregates at at, as for any part. A
// part with no usable document (the first fold of the source, a part split
// by a fold whose write did not land, a reconcile: whole), or whose
// records, so brought up to date, are not as many as its children at at
// (a child whose event never came: one too big for an event, or lost), is
// scanned: every child in the range is read at at, and its counts come
// from what was read. A part past PartMax children, or maxRecordBytes of records, is
// split by its records, at ids, moving nothing. old is the part as the
// counted document holds it, nil if it holds none.
func (d Doc) foldValued(ctx context.Context, aggs []Aggregate, src, lo, hi string, old *Part, changed []Child, whole bool, at time.Time) (PartFold, error) {
	var pf PartFold
	err := d.Client.RunTransaction(ctx, func(ctx context.Context, tx *firestore.Transaction) error {
		pf = PartFold{Source: src, Lo: lo, Hi: hi}
		fields := summedFields(aggs, src)
		doc, err := readPartDoc(tx, d.PartDoc(src, lo))
		if err != nil {
			return err
		}
		if whole || !doc.holds(src, lo, hi, fields) {
			return d.scanChanged(ctx, tx, &pf, doc, aggs, fields, changed, at)
		}
		recs, read, latest := doc.recs, []string(nil), time.Time{}
		for _, c := range changed {
			latest = maxTime(latest, c.At)
			if i, ok := findRecord(recs, c.ID); !ok || recs[i].At.Before(c.At) {
				read = append(read, c.ID)
			}
		}
		if len(read) == 0 && old != nil && old.At.Equal(doc.at) && !old.At.Before(latest) {
			// The part and the counted document hold every child asked
			// for, as of its event or later: nothing to write.
			pf.Same, pf.Children = true, childTimes(changed, recs, at)
			return nil
		}
		if recs, err = d.readChildren(tx, src, recs, read, fields, at); err != nil {
			return err
		}
		pf.Children = childTimes(changed, recs, at)
		err = d.splitRecords(ctx, tx, &pf, doc, aggs, fields, recs, old, at)
		if errors.Is(err, errRecordsDisagree) {
			// A child whose event never came (too big for an event, or
			// lost), or a removal's: read the part's children again.
			pf = PartFold{Source: src, Lo: lo, Hi: hi}
			return d.scanChanged(ctx, tx, &pf, doc, aggs, fields, changed, at)
		}
		return err
	}, firestore.ReadOnly, firestore.TransactionReadTime(at))
	return pf, err
}

// scanChanged scans pf's part (scanPart), and says that it holds each
// child asked for as of at: every child of its range was read then, and
// one that is gone, or never came, holds nothing.
func (d Doc) scanChanged(ctx context.Context, tx *firestore.Transaction, pf *PartFold, doc partDoc, aggs []Aggregate, fields []string, changed []Child, at time.Time) error {
	if err := d.scanPart(ctx, tx, pf, doc, aggs, fields, at); err != nil {
		return err
	}
	pf.Children = childTimes(changed, nil, at)
	return nil
}

// errRecordsDisagree ends a part's fold whose records are not one a child
// of the children its range holds at the fold's read time.
var errRecordsDisagree = errors.New("aggregate: a part's records disagree with its children")

// readChildren reads the children ids of src at at, in tx, and returns
// recs with their records replaced, or dropped where a child is gone.
func (d Doc) readChildren(tx *firestore.Transaction, src string, recs []record, ids, fields []string, at time.Time) ([]record, error) {
	if len(ids) == 0 {
		return recs, nil
	}
	coll := d.Children(src)
	refs := make([]*firestore.DocumentRef, len(ids))
	for i, c := range ids {
		refs[i] = coll.Doc(c)
	}
	snaps, err := tx.GetAll(refs)
	if err != nil {
		return nil, err
	}
	recs, rs := slices.Clone(recs), recordings(fields)
	for _, snap := range snaps {
		i, found := findRecord(recs, snap.Ref.ID)
		switch {
		case snap.Exists() && found:
			recs[i] = recordOf(snap.Ref.ID, snap.Data(), rs, at)
		case snap.Exists():
			recs = slices.Insert(recs, i, recordOf(snap.Ref.ID, snap.Data(), rs, at))
		case found:
			recs = slices.Delete(recs, i, i+1)
		}
	}
	return recs, nil
}

// recordOf is the record of child id, whose data was read at at: its
// value of each recording where the child passes its filters.
func recordOf(id string, data map[string]any, rs []recording, at time.Time) record {
	r := record{ID: id, At: at, Vals: make([]Num, len(rs))}
	for i, c := range rs {
		if matches(data, c.where) {
			r.Vals[i] = numOf(data[c.of])
		}
	}
	return r
}

// findRecord is where child id's record is in recs (sorted by id), or
// would be, and whether it is there.
func findRecord(recs []record, id string) (int, bool) {
	return slices.BinarySearchFunc(recs, id, func(r record, id string) int { return strings.Compare(r.ID, id) })
}

// childTimes says, for each child asked for, the read time of the value
// the part now holds of it: its record's, or at, for a child it holds no
// record of (gone, as of at).
func childTimes(changed []Child, recs []record, at time.Time) []Child {
	out := make([]Child, len(changed))
	for i, c := range changed {
		out[i] = Child{Source: c.Source, ID: c.ID, At: at}
		if j, ok := findRecord(recs, c.ID); ok {
			out[i].At = recs[j].At
		}
	}
	return out
}

// splitRecords makes the part [pf.Lo, pf.Hi) from recs, its children's
// records as of at: one part, or, past PartMax children or maxRecordBytes,
// several, cut at ids. Each part's counts are aggregated at at in tx.
func (d Doc) splitRecords(ctx context.Context, tx *firestore.Transaction, pf *PartFold, doc partDoc, aggs []Aggregate, fields []string, recs []record, old *Part, at time.Time) error {
	n, err := d.countRange(ctx, tx, pf, aggs, pf.Source, pf.Lo, pf.Hi, at, old)
	if err != nil {
		return err
	}
	if n.N != int64(len(recs)) {
		return errRecordsDisagree
	}
	chunks := []chunk{{lo: pf.Lo, recs: recs}}
	if len(recs) > PartMax || recordBytes(recs) > maxRecordBytes {
		// Cut by the records, which the part's count may be ahead of
		// while events are on their way: each part then holds about as
		// many children.
		chunks = cut(pf.Lo, recs)
	}
	if len(chunks) == 1 {
		part := n
		addSums(&part, aggs, pf.Source, fields, recs)
		pf.Parts = Parts{PartKey(pf.Lo): part}
		pf.docs = doc.writes(pf.Source, pf.Lo, pf.Hi, fields, recs, at)
		return nil
	}
	return d.keepChunks(tx, pf, doc, aggs, fields, chunks, at, func(c chunk, hi string) (Part, error) {
		return d.countRange(ctx, tx, pf, aggs, pf.Source, c.lo, hi, at, nil)
	})
}

// keepChunks makes pf's parts of chunks, each part's counts from count
// (given the chunk and the end of its range), its sums from its records,
// and the writes of its part document (doc, as read, for the first).
func (d Doc) keepChunks(tx *firestore.Transaction, pf *PartFold, doc partDoc, aggs []Aggregate, fields []string, chunks []chunk, at time.Time, count func(c chunk, hi string) (Part, error)) error {
	pf.Parts = Parts{}
	for i, c := range chunks {
		hi := pf.Hi
		if i+1 < len(chunks) {
			hi = chunks[i+1].lo
		}
		part, err := count(c, hi)
		if err != nil {
			return err
		}
		addSums(&part, aggs, pf.Source, fields, c.recs)
		pf.Parts[PartKey(c.lo)] = part
		pd := doc
		if i > 0 {
			if pd, err = readPartDoc(tx, d.PartDoc(pf.Source, c.lo)); err != nil {
				return err
			}
		}
		pf.docs = append(pf.docs, pd.writes(pf.Source, c.lo, hi, fields, c.recs, at)...)
	}
	return nil
}

// scanPart reads every child of the part [pf.Lo, pf.Hi) at at, in tx, and
// makes its parts from them: their records, and their counts from what
// was read (the filters of a count applied to each child as Firestore's
// equality does), cut at ids past PartMax children.
func (d Doc) scanPart(ctx context.Context, tx *firestore.Transaction, pf *PartFold, doc partDoc, aggs []Aggregate, fields []string, at time.Time) error {
	src := pf.Source
	var read []string
	for _, c := range recordings(fields) {
		read = appendNew(read, c.of)
		for _, w := range c.where {
			read = appendNew(read, w.Field)
		}
	}
	for _, a := range aggs {
		for _, w := range a.Where {
			if a.Source() == src && !slices.Contains(read, w.Field) {
				read = append(read, w.Field)
			}
		}
	}
	q := rangeOf(d.Children(src), pf.Lo, pf.Hi).Select(read...).OrderBy(firestore.DocumentID, firestore.Asc)
	it := tx.Documents(q)
	defer it.Stop()
	chunks, err := scanChunks(it, pf.Lo, src, aggs, fields, at)
	if err != nil {
		return err
	}
	switch n := len(chunks); {
	case n > 1 && countAll(chunks) <= PartMax:
		chunks = []chunk{merge(chunks)} // a part of PartMax children or fewer stays whole
	case n > 1 && len(chunks[n-1].recs) < PartMax/4:
		chunks = append(chunks[:n-2], merge(chunks[n-2:])) // no small part at the end
	}
	pf.Children = nil
	err = d.keepChunks(tx, pf, doc, aggs, fields, chunks, at, func(c chunk, _ string) (Part, error) {
		part := Part{At: at, N: int64(len(c.recs)), V: map[string]any{}, C: map[string]int64{}}
		for _, a := range aggs {
			if a.Source() == src && a.Op == OpCount {
				part.V[a.Field] = c.counts[a.Field]
			}
		}
		return part, nil
	})
	pf.Scanned = err == nil
	return err
}

// scanChunks reads the children it lists, from lo on, into chunks of
// about half a part each, cut between ids: each child's record of fields
// as of at, and each chunk's counts of src's counts (their filters
// applied to each child read).
func scanChunks(it *firestore.DocumentIterator, lo, src string, aggs []Aggregate, fields []string, at time.Time) ([]chunk, error) {
	var chunks []chunk
	cur := chunk{lo: lo, counts: map[string]int64{}}
	rs := recordings(fields)
	var last string
	for {
		snap, err := it.Next()
		if err == iterator.Done {
			break
		}
		if err != nil {
			return nil, err
		}
		id := snap.Ref.ID
		if len(cur.recs) >= PartMax/2 || recordBytes(cur.recs) >= maxRecordBytes/2 {
			if sep, ok := separator(last, id); ok {
				chunks = append(chunks, cur)
				cur = chunk{lo: sep, counts: map[string]int64{}}
			}
		}
		data := snap.Data()
		cur.recs = append(cur.recs, recordOf(id, data, rs, at))
		for _, a := range aggs {
			if a.Source() == src && a.Op == OpCount && matches(data, a.Where) {
				cur.counts[a.Field]++
			}
		}
		last = id
	}
	return append(chunks, cur), nil
}

// chunk is the records of one part to be, and, from a scan, its counts.
type chunk struct {
	lo     string
	recs   []record
	counts map[string]int64
}

func countAll(cs []chunk) int {
	n := 0
	for _, c := range cs {
		n += len(c.recs)
	}
	return n
}

// merge makes one chunk of cs, in order.
func merge(cs []chunk) chunk {
	out := chunk{lo: cs[0].lo, counts: map[string]int64{}}
	for _, c := range cs {
		out.recs = append(out.recs, c.recs...)
		for k, v := range c.counts {
			out.counts[k] += v
		}
	}
	return out
}

// cut cuts recs, the records of the part that starts at lo, into chunks
// of equal numbers of records, about PartMax/2 each, and at most
// maxRecordBytes/2 bytes, each starting at an id no longer than
// maxKeyBytes.
func cut(lo string, recs []record) []chunk {
	k := (len(recs) + PartMax/2 - 1) / (PartMax / 2)
	size := (len(recs) + k - 1) / max(k, 1)
	out := []chunk{{lo: lo}}
	for i, r := range recs {
		cur := &out[len(out)-1]
		if len(cur.recs) >= size || recordBytes(cur.recs) >= maxRecordBytes/2 {
			if sep, ok := separator(recs[i-1].ID, r.ID); ok {
				out = append(out, chunk{lo: sep})
				cur = &out[len(out)-1]
			}
		}
		cur.recs = append(cur.recs, r)
	}
	return out
}

// maxKeyBytes bounds where a part starts: its key is a field name in the
// counted document's _tally.parts, whose path Firestore bounds at 1,500
// bytes. Children with longer ids in common stay in one part.
const maxKeyBytes = 256

// separator is the shortest start of a part that holds next but not
// prev (prev < next): the shortest prefix of next, cut between two
// characters, that is past prev; ok is false if it would be longer than
// maxKeyBytes.
func separator(prev, next string) (string, bool) {
	for i := range next {
		if i > 0 && next[:i] > prev {
			return next[:i], i <= maxKeyBytes
		}
	}
	return next, len(next) <= maxKeyBytes && utf8.ValidString(next)
}

// recordBytes is about how many bytes recs take encoded.
func recordBytes(recs []record) int {
	n := 0
	for _, r := range recs {
		n += len(r.ID) + 12 + 9*len(r.Vals)
	}
	return n
}

// addSums sets each sum's, average's, greatest's and least's value over
// recs on part.
func addSums(part *Part, aggs []Aggregate, src string, fields []string, recs []record) {
	for _, a := range aggs {
		if a.Source() != src || a.Op == OpCount {
			continue
		}
		i := sort.SearchStrings(fields, a.recorded())
		if extreme(a.Op) {
			var e extremum
			for _, r := range recs {
				e.add(a.Op, r.Vals[i])
			}
			if part.C[a.Field] = e.n; e.ok {
				part.V[a.Field] = e.value()
			}
			continue
		}
		var t total
		for _, r := range recs {
			t.add(r.Vals[i])
		}
		part.V[a.Field], part.C[a.Field] = t.sum(), t.n
		if x := t.exact(); x != nil {
			if part.X == nil {
				part.X = map[string]map[string]any{}
			}
			part.X[a.Field] = x
		}
	}
}

// matches reports whether a child's data passes every filter, as
// Firestore's equality filters take it: a string equals a string, a bool
// a bool, an integer a number of the same value, integer or double.
func matches(data map[string]any, where []Filter) bool {
	for _, w := range where {
		v := data[w.Field]
		switch want := w.Value.(type) {
		case string, bool:
			if v != want {
				return false
			}
		case int64:
			switch x := v.(type) {
			case int64:
				if x != want {
					return false
				}
			case float64:
				if x != float64(want) {
					return false
				}
			default:
				return false
			}
		default:
			return false
		}
	}
	return true
}

// rangeOf is the query of coll's documents in [lo, hi) ("" for no bound).
func rangeOf(coll *firestore.CollectionRef, lo, hi string) firestore.Query {
	q := coll.Query
	if lo != "" {
		q = q.Where(firestore.DocumentID, ">=", coll.Doc(lo))
	}
	if hi != "" {
		q = q.Where(firestore.DocumentID, "<", coll.Doc(hi))
	}
	return q
}

// Err is the failure of an aggregate, for a log line.
func (fl Failure) String() string { return fmt.Sprintf("%s: %v", fl.Field, fl.Err) }

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// appendNew appends s to list unless it holds it.
func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}
