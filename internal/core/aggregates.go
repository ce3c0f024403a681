package core

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/internal/core/aggregate"
)

// CoversChild reports whether the document's aggregates of source hold a
// write made at t to child.
func (p Parent) CoversChild(source, child string, t time.Time) bool {
	if !p.Exists {
		return p.Covers(t)
	}
	key, _, ok := p.Parts[source].Of(child)
	return ok && !t.After(p.Parts[source][key].At)
}

// Unfolded names the start of each aggregated source of the document name
// that p holds no part of: what its first fold aggregates from scratch.
func (l Layout) Unfolded(name string, p Parent) []aggregate.Child {
	var out []aggregate.Child
	for _, src := range aggregate.Sources(l.Aggregates(name)) {
		if len(p.Parts[src]) == 0 {
			out = append(out, aggregate.Child{Source: src, Whole: true})
		}
	}
	return out
}

// PartsCollection holds, under a counted document's life, one document for
// each part of a valued source (package aggregate): its range, the read
// time of the fold that wrote it, and its children's records. Only tally
// reads and writes it; the counted document's _tally.parts holds what its
// aggregates are made of, and names the part documents by their ranges.
const PartsCollection = "parts"

// PartDoc is the document of the part of src that starts at lo, in the
// given life of the counted document name: its id is a hash of the two,
// as an id may be any string and a part's start is one.
func (l Layout) PartDoc(c *firestore.Client, name, life, src, lo string) *firestore.DocumentRef {
	sum := sha256.Sum256([]byte(src + "\x00" + lo))
	return l.Lives(c, name).Doc(life).Collection(PartsCollection).Doc(hex.EncodeToString(sum[:16]))
}

// validChild checks an aggregate's collection: an id, or a path from the
// root with an odd number of segments.
func validChild(a aggregate.Aggregate) error {
	segs := strings.Split(a.Child, "/")
	if !a.Root && len(segs) != 1 {
		return fmt.Errorf("the collection %q: give a collection id under the document (comments), or a path from the root (/users)", a.Child)
	}
	if len(segs)%2 == 0 {
		return fmt.Errorf("the collection /%s is a document path, not a collection's", a.Child)
	}
	for _, s := range segs {
		if err := ValidName(s); err != nil {
			return fmt.Errorf("the collection %q: segment %q: %w", a.Child, s, err)
		}
	}
	return nil
}
