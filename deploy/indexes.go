package deploy

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/core/aggregate"
	"github.com/tallycounters/tally/internal/core/rank"
)

// IndexFile is Firestore's index configuration, as the Firebase CLI
// (firestore.indexes.json) and `gcloud firestore indexes` take it: the
// composite indexes the queries tally runs need, and the fields tally
// writes that no query reads, whose indexing it turns off.
type IndexFile struct {
	Indexes        []Index         `json:"indexes"`
	FieldOverrides []FieldOverride `json:"fieldOverrides"`
}

// Index is one composite index.
type Index struct {
	CollectionGroup string       `json:"collectionGroup"`
	QueryScope      string       `json:"queryScope"`
	Fields          []IndexField `json:"fields"`
}

// IndexField is one field of a composite index.
type IndexField struct {
	FieldPath string `json:"fieldPath"`
	Order     string `json:"order"`
}

// FieldOverride sets the single-field indexes of one field: none, or
// those listed.
type FieldOverride struct {
	CollectionGroup string       `json:"collectionGroup"`
	FieldPath       string       `json:"fieldPath"`
	Indexes         []FieldIndex `json:"indexes"`
}

// FieldIndex is one single-field index of a FieldOverride.
type FieldIndex struct {
	Order      string `json:"order"`
	QueryScope string `json:"queryScope"`
}

// Indexes are the indexes the declared counts need on Firestore. Every
// query tally runs is served by the indexes Firestore keeps by itself but
// one: a count with filters on two fields or more (count(comments where
// hidden == false and lang == "en")), over a part's range of ids, is
// served by a composite index of those fields, which Firestore keeps only
// when asked. (A count with one filter reads the field's own index, in the
// order of ids; a part's count, its range of the ids' index; a sum of
// shards, the shard field's index.) tally's bookkeeping of parts, which
// no query reads and which grows with a document's children, is kept out
// of the indexes: its counted document's _tally.parts, and its part
// documents' records, and so are the cells a ranked document records.
func Indexes(l core.Layout) IndexFile {
	f := IndexFile{Indexes: []Index{}, FieldOverrides: []FieldOverride{}}
	valued := false
	for _, d := range l.Docs {
		if len(d.Windows) > 0 {
			// The boundary job finds the documents due with a query on
			// next_boundary (fold.Folder.Due): of a collection under
			// others (users/*/posts), a collection group query, which needs
			// its index of that scope. A window's series, which no query
			// reads, is kept out.
			g := lastID(d.Collection, d.One())
			if strings.Contains(d.Collection, "/") && !d.One() {
				f.FieldOverrides = appendOnce(f.FieldOverrides, FieldOverride{CollectionGroup: g,
					FieldPath: core.FieldBookkeeping + "." + core.FieldNextBoundary, Indexes: []FieldIndex{
						{Order: "ASCENDING", QueryScope: "COLLECTION"}, {Order: "ASCENDING", QueryScope: "COLLECTION_GROUP"}}})
			}
			f.FieldOverrides = appendOnce(f.FieldOverrides, FieldOverride{CollectionGroup: g,
				FieldPath: core.FieldBookkeeping + "." + core.FieldWindows, Indexes: []FieldIndex{}})
		}
		if len(d.Ranks) > 0 {
			// The cells a ranked document records (package rank), which
			// no query reads: a rank reads the field itself, whose own
			// index serves count() of a range of it, and the top-N and
			// around-me queries (docs/rank.md).
			f.FieldOverrides = appendOnce(f.FieldOverrides, FieldOverride{CollectionGroup: lastID(d.Collection, d.One()),
				FieldPath: core.FieldBookkeeping + "." + rank.FieldRank, Indexes: []FieldIndex{}})
		}
		if len(d.Aggregates) == 0 {
			continue
		}
		f.FieldOverrides = appendOnce(f.FieldOverrides, FieldOverride{CollectionGroup: lastID(d.Collection, d.One()),
			FieldPath: core.FieldBookkeeping + "." + aggregate.FieldParts, Indexes: []FieldIndex{}})
		for _, a := range d.Aggregates {
			valued = valued || a.Op != aggregate.OpCount
			if len(a.Where) < 2 || a.Op != aggregate.OpCount {
				continue // a valued aggregate's filters are applied to the children it records, by no query
			}
			ix := Index{CollectionGroup: lastID(a.Child, false), QueryScope: "COLLECTION"}
			for _, w := range a.Where {
				if !slices.ContainsFunc(ix.Fields, func(f IndexField) bool { return f.FieldPath == w.Field }) {
					ix.Fields = append(ix.Fields, IndexField{FieldPath: w.Field, Order: "ASCENDING"})
				}
			}
			// Equality filters take the index of their fields in any
			// order: one index, in the order of their names, serves them all.
			slices.SortFunc(ix.Fields, func(a, b IndexField) int { return strings.Compare(a.FieldPath, b.FieldPath) })
			if len(ix.Fields) > 1 && !slices.ContainsFunc(f.Indexes, func(o Index) bool { return sameIndex(o, ix) }) {
				f.Indexes = append(f.Indexes, ix)
			}
		}
	}
	if valued {
		f.FieldOverrides = append(f.FieldOverrides, FieldOverride{CollectionGroup: core.PartsCollection, FieldPath: "records", Indexes: []FieldIndex{}})
	}
	return f
}

// Lines are f as deploy.sh reads it, a line each: "composite GROUP SCOPE
// FIELD...", "exempt GROUP FIELDPATH", and "field GROUP FIELDPATH SCOPE..."
// (ascending indexes of those scopes).
func (f IndexFile) Lines() []string {
	var out []string
	for _, ix := range f.Indexes {
		fields := make([]string, len(ix.Fields))
		for i, x := range ix.Fields {
			fields[i] = x.FieldPath
		}
		out = append(out, fmt.Sprintf("composite %s %s %s", ix.CollectionGroup, strings.ToLower(ix.QueryScope), strings.Join(fields, " ")))
	}
	for _, o := range f.FieldOverrides {
		if len(o.Indexes) == 0 {
			out = append(out, fmt.Sprintf("exempt %s %s", o.CollectionGroup, o.FieldPath))
			continue
		}
		scopes := make([]string, len(o.Indexes))
		for i, x := range o.Indexes {
			scopes[i] = strings.ReplaceAll(strings.ToLower(x.QueryScope), "_", "-")
		}
		out = append(out, fmt.Sprintf("field %s %s %s", o.CollectionGroup, o.FieldPath, strings.Join(scopes, " ")))
	}
	return out
}

// lastID is the collection id of a collection path, or, for one
// document's path, of its collection.
func lastID(path string, one bool) string {
	segs := strings.Split(path, "/")
	if one {
		segs = segs[:len(segs)-1]
	}
	return segs[len(segs)-1]
}

func sameIndex(a, b Index) bool {
	return a.CollectionGroup == b.CollectionGroup && a.QueryScope == b.QueryScope && slices.Equal(a.Fields, b.Fields)
}

func appendOnce(os []FieldOverride, o FieldOverride) []FieldOverride {
	for _, x := range os {
		if x.CollectionGroup == o.CollectionGroup && x.FieldPath == o.FieldPath {
			return os
		}
	}
	return append(os, o)
}
