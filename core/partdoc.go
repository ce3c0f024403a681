package core

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"time"

	"cloud.google.com/go/firestore"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// PartsCollection holds, under a counted document's life, one document
// for each part of a valued source (records.go): its range, the read time
// of the fold that wrote it, and its children's records. Only tally reads
// and writes it; the counted document's _tally.parts holds what its
// aggregates are made of, and names the part documents by their ranges.
const PartsCollection = "parts"

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

// PartDoc is the document of the part of src that starts at lo, in the
// given life of the counted document name: its id is a hash of the two,
// as an id may be any string and a part's start is one.
func (l Layout) PartDoc(c *firestore.Client, name, life, src, lo string) *firestore.DocumentRef {
	sum := sha256.Sum256([]byte(src + "\x00" + lo))
	return l.Lives(c, name).Doc(life).Collection(PartsCollection).Doc(hex.EncodeToString(sum[:16]))
}

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
