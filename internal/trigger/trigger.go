// Package trigger says which Eventarc triggers Rollup takes for a layout:
// a write to any shard of a counter, a write to any child of an
// aggregated collection, and, on documents, the creation of a counted
// document and the deletion of a ranked one; and, with the
// firestore-counter extension's counters taken over, the creation and
// update of the shards under the documents declared. deploy.sh, the local stack and the tally
// command make them from here; Rollup tells a creation from a write by
// its type.
package trigger

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/extension"
)

// Event types of the Firestore triggers Rollup takes.
const (
	Written = "google.cloud.firestore.document.v1.written"
	Created = "google.cloud.firestore.document.v1.created"
	Updated = "google.cloud.firestore.document.v1.updated"
	Deleted = "google.cloud.firestore.document.v1.deleted"
)

// Trigger is one Eventarc trigger of Rollup: an event type and a path
// pattern.
type Trigger struct {
	Type    string
	Pattern string
}

// Of are the Eventarc triggers Rollup takes events from for l: a write
// to a shard of each collection with counts, to a child of each
// aggregated collection (WrittenPatterns), and, on documents, the
// creation of a counted document (CreatedPatterns), whose counts tally
// then gives it at once; and the creation and the update of a shard or
// partial of the firestore-counter extension's under each document ext
// declares (not their deletion: a move's own, it has nothing to move).
func Of(l core.Layout, ext extension.Counters) []Trigger {
	var out []Trigger
	for _, p := range WrittenPatterns(l) {
		out = append(out, Trigger{Type: Written, Pattern: p})
	}
	for _, p := range CreatedPatterns(l) {
		out = append(out, Trigger{Type: Created, Pattern: p})
	}
	for _, p := range DeletedPatterns(l) {
		out = append(out, Trigger{Type: Deleted, Pattern: p})
	}
	for _, p := range ExtensionPatterns(ext) {
		out = append(out, Trigger{Type: Created, Pattern: p}, Trigger{Type: Updated, Pattern: p})
	}
	return out
}

// ExtensionPatterns are the path patterns of the firestore-counter
// extension's shards and partials under the documents ext declares: no
// other document's shards reach Rollup.
func ExtensionPatterns(ext extension.Counters) []string {
	var out []string
	for _, d := range ext.Documents() {
		out = append(out, pattern(d)+"/"+extension.Collection+"/{shard}")
	}
	return out
}

// DeletedPatterns are the path patterns of the ranked documents, whose
// deletion takes them off their boards.
func DeletedPatterns(l core.Layout) []string {
	var out []string
	for _, d := range l.Docs {
		if len(d.Ranks) > 0 {
			out = append(out, pattern(d.Collection+"/*"))
		}
	}
	return out
}

// WrittenPatterns are the path patterns of the writes Rollup is
// triggered on: the shard documents of each collection with counts, then
// the children of each aggregated collection.
func WrittenPatterns(l core.Layout) []string {
	shards, _, _ := l.Subcollections()
	shards = "/" + shards + "/{shardId}"
	if !l.OnDocs() {
		return []string{l.Collection + "/{counterId}" + shards}
	}
	var out []string
	for _, d := range l.Docs {
		if len(d.Fields) > 0 {
			out = append(out, pattern(d.Collection+"/*")+"/"+core.LivesCollection+"/{life}"+shards)
		}
	}
	return append(out, ChildPatterns(l)...)
}

// ChildPatterns are the path patterns of the documents that declared
// aggregates aggregate, one per collection, each once.
func ChildPatterns(l core.Layout) []string {
	var out []string
	for _, d := range l.Docs {
		for _, a := range d.Aggregates {
			p := pattern(d.ChildPattern(a)) + "/{child}"
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	return out
}

// CreatedPatterns are the path patterns of the counted documents, whose
// creation Rollup is told of: none in the guide layout, where tally
// makes its parents itself.
func CreatedPatterns(l core.Layout) []string {
	var out []string
	for _, d := range l.Docs {
		if d.One() {
			out = append(out, d.Collection)
		} else {
			out = append(out, pattern(d.Collection+"/*"))
		}
	}
	return out
}

// pattern writes a path with '*' for any id as an Eventarc path pattern:
// each '*' a wildcard of its own, {doc0}, {doc1}...
func pattern(path string) string {
	segs := strings.Split(path, "/")
	for j := range segs {
		if segs[j] == "*" {
			segs[j] = fmt.Sprintf("{doc%d}", j/2)
		}
	}
	return strings.Join(segs, "/")
}
