package core

import (
	"crypto/sha256"
	"encoding/hex"

	"cloud.google.com/go/firestore"
)

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
