package fold

import (
	"context"
	"fmt"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/core/aggregate"
)

// AllParts names every part p holds, and the start of each source it has
// none of: what a fold from scratch refolds, each part whole.
func (f *Folder) AllParts(id string, p core.Parent) []aggregate.Child {
	var out []aggregate.Child
	for _, src := range aggregate.Sources(f.layout.Aggregates(id)) {
		if len(p.Parts[src]) == 0 {
			out = append(out, aggregate.Child{Source: src, Whole: true})
			continue
		}
		for _, k := range p.Parts[src].Keys() {
			out = append(out, aggregate.Child{Source: src, ID: aggregate.PartLo(k), Whole: true})
		}
	}
	return out
}

// source is the collection of src's children of the document at id.
func (f *Folder) source(id, src string) *firestore.CollectionRef {
	if src[0] == '/' {
		return f.client.Collection(src[1:])
	}
	return f.layout.Counter(f.client, id).Collection(src)
}

// SumParts refolds, at the read time at, the parts of the document at id,
// as p holds them, that hold the given children, and every part of a
// source of which p holds none (aggregate.Doc.Refold, bounded in time).
func (f *Folder) SumParts(ctx context.Context, id string, p core.Parent, children []aggregate.Child, at time.Time) ([]aggregate.PartFold, error) {
	d := aggregate.Doc{Client: f.client, Aggs: f.layout.Aggregates(id), Parts: p.Parts,
		Children: func(src string) *firestore.CollectionRef { return f.source(id, src) },
		PartDoc:  func(src, lo string) *firestore.DocumentRef { return f.layout.PartDoc(f.client, id, p.Life, src, lo) }}
	out, err := d.Refold(ctx, children, at)
	if err != nil {
		return nil, fmt.Errorf("fold: aggregate the children of %s at %s: %w", id, at.Format(time.RFC3339Nano), err)
	}
	return out, nil
}
