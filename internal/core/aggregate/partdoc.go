package aggregate

import (
	"context"
	"fmt"
	"slices"
	"time"

	"cloud.google.com/go/firestore"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Fields of a part document.
const (
	docSource  = "source"
	docLo      = "lo"
	docHi      = "hi"
	docAt      = "at"
	docFields  = "fields"
	docCount   = "n"
	docRecords = "records"
)

// maxRecordBytes bounds a part document's records: a part whose records
// take more (ids near Firestore's 1,500 bytes) is split, however few
// children it holds, well within Firestore's 1 MiB a document.
const maxRecordBytes = 256 << 10

// partDoc is a part document as a fold read it.
type partDoc struct {
	ref     *firestore.DocumentRef
	exists  bool
	updated time.Time // its update time, which the fold's write compares and sets on
	src     string
	lo, hi  string
	at      time.Time
	fields  []string
	recs    []record
	damaged bool // its records could not be read: it is written anew
}

// readPartDoc reads the part document at ref in tx.
func readPartDoc(tx *firestore.Transaction, ref *firestore.DocumentRef) (partDoc, error) {
	d := partDoc{ref: ref}
	snap, err := tx.Get(ref)
	if status.Code(err) == codes.NotFound {
		return d, nil
	}
	if err != nil {
		return d, err
	}
	data := snap.Data()
	d.exists, d.updated = true, snap.UpdateTime
	d.src, _ = data[docSource].(string)
	d.lo, _ = data[docLo].(string)
	d.hi, _ = data[docHi].(string)
	d.at, _ = data[docAt].(time.Time)
	fs, _ := data[docFields].([]any)
	for _, f := range fs {
		s, _ := f.(string)
		d.fields = append(d.fields, s)
	}
	raw, _ := data[docRecords].([]byte)
	if d.recs, err = decodeRecords(raw, len(d.fields)); err != nil {
		d.recs, d.damaged = nil, true
	}
	return d, nil
}

// holds reports whether d is the part [lo, hi) of src, with records of
// fields, that a fold may go on from.
func (d partDoc) holds(src, lo, hi string, fields []string) bool {
	return d.exists && !d.damaged && d.src == src && d.lo == lo && d.hi == hi && slices.Equal(d.fields, fields)
}

// partWrite is a part document a fold writes, before the counted
// document: the part's records as of at, on the condition that the
// document is still as the fold read it (absent, or at its update time).
type partWrite struct {
	ref     *firestore.DocumentRef
	exists  bool
	updated time.Time
	data    map[string]any
}

// writes are what replaces d with the part document of [lo, hi) of src
// with records recs, read at at: none for a part with no children and no
// document yet, which a fold reads whole at no more cost than a document.
func (d partDoc) writes(src, lo, hi string, fields []string, recs []record, at time.Time) []partWrite {
	if len(recs) == 0 && !d.exists {
		return nil
	}
	return []partWrite{d.write(src, lo, hi, fields, recs, at)}
}

// write is the part document of [lo, hi) of src with records recs, read
// at at, to replace d.
func (d partDoc) write(src, lo, hi string, fields []string, recs []record, at time.Time) partWrite {
	fs := make([]any, len(fields))
	for i, f := range fields {
		fs[i] = f
	}
	return partWrite{ref: d.ref, exists: d.exists, updated: d.updated, data: map[string]any{
		docSource: src, docLo: lo, docHi: hi, docAt: at, docFields: fs,
		docCount: int64(len(recs)), docRecords: encodeRecords(recs),
	}}
}

// updates are w's fields as an update, which replaces each of them.
func (w partWrite) updates() []firestore.Update {
	out := make([]firestore.Update, 0, len(w.data))
	for k, v := range w.data {
		out = append(out, firestore.Update{Path: k, Value: v})
	}
	return out
}

// writePartDocs writes the part documents of one part refolded, each on
// the condition that it is as the fold read it: ErrStale if one is not
// (another fold wrote it since). They are written before the counted
// document, so that its parts are never of records not yet kept; a part
// document newer than what the counted document holds of it is what the
// next fold goes on from.
func (d Doc) writePartDocs(ctx context.Context, writes []partWrite) error {
	if len(writes) == 0 {
		return nil
	}
	one := func(w partWrite) (*firestore.WriteResult, error) {
		if w.exists {
			return w.ref.Update(ctx, w.updates(), firestore.LastUpdateTime(w.updated))
		}
		return w.ref.Create(ctx, w.data)
	}
	var errs []error
	if len(writes) == 1 {
		_, err := one(writes[0])
		errs = append(errs, err)
	} else {
		bw := d.Client.BulkWriter(ctx)
		jobs := make([]*firestore.BulkWriterJob, 0, len(writes))
		for _, w := range writes {
			var j *firestore.BulkWriterJob
			var err error
			if w.exists {
				j, err = bw.Update(w.ref, w.updates(), firestore.LastUpdateTime(w.updated))
			} else {
				j, err = bw.Create(w.ref, w.data)
			}
			if err != nil {
				bw.End()
				return fmt.Errorf("aggregate: write a part: %w", err)
			}
			jobs = append(jobs, j)
		}
		bw.End()
		for _, j := range jobs {
			_, err := j.Results()
			errs = append(errs, err)
		}
	}
	for _, err := range errs {
		switch status.Code(err) {
		case codes.OK:
		case codes.FailedPrecondition, codes.NotFound, codes.AlreadyExists:
			return ErrStale
		default:
			return fmt.Errorf("aggregate: write a part: %w", err)
		}
	}
	return nil
}
