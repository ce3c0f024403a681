package core

import (
	"context"
	"strconv"
	"time"

	"cloud.google.com/go/firestore"
)

// A counted document of the app's (counts on documents) can be deleted
// and created again at the same path. tally keeps what it writes for one
// (its shards, its users' votes, the records of its idempotency keys)
// under that document's life: its create time, in microseconds, which the
// document created again does not share; and, once a fold has recorded
// it, the life the document's bookkeeping records, which an import or a
// restore keeps though it gives the document a new create time (the
// emulator's --data does at every start). A document written whole with
// another's bookkeeping takes that life, and its counts, with it. posts/p's shards are
// posts/p/lives/{life}/shards/{n}. A fold sums the shards of the life the
// document has, and nothing written for another life, before the
// document was deleted or after (by an Increment whose cache had not yet
// seen the delete), is ever counted for it. A fold writes the life it
// counts on the document (_tally.life), where clients find the path of
// their votes. The guide layout's counters/{id} have no lives: their life
// is "".

// LivesCollection holds, under a counted document, one document id per
// life of it, each with that life's shards, voters and keys.
const LivesCollection = "lives"

// FieldLife is, in a counted document's _tally map, the life whose counts
// it holds.
const FieldLife = "life"

// LifeOf is the life of a counted document created at created whose
// bookkeeping records none: "" in the guide layout, its create time in
// microseconds on documents.
func (l Layout) LifeOf(created time.Time) string { return l.kind().lifeOf(created) }

// LifeIn is the life of a counted document of data, created at created:
// the life recorded, if its bookkeeping holds one, else LifeOf(created).
func (l Layout) LifeIn(data map[string]any, created time.Time) string {
	return l.kind().lifeIn(data, created)
}

// LifePath is the field path of the life a counted document's counts are
// of.
func (l Layout) LifePath() firestore.FieldPath { return l.FieldPath(FieldLife) }

// home is the document under which tally keeps the named counter's
// shards, voters and keys: the counter itself in the guide layout, the
// given life of the counted document otherwise.
func (l Layout) home(c *firestore.Client, name, life string) *firestore.DocumentRef {
	return l.kind().home(c, name, life)
}

// Lives is the collection of a counted document's lives (none in the
// guide layout): a document id for each life that tally wrote something
// for, whose subcollections hold it.
func (l Layout) Lives(c *firestore.Client, name string) *firestore.CollectionRef {
	return l.Counter(c, name).Collection(LivesCollection)
}

// validLife reports whether s may name a life: a non-negative integer
// written without sign or leading zeros.
func validLife(s string) bool {
	n, err := strconv.ParseInt(s, 10, 64)
	return err == nil && n >= 0 && strconv.FormatInt(n, 10) == s
}

// Owner is the counted document a shard (or a vote, or a key's record) is
// tally's for, and the life of it: the document it is under in the guide
// layout, the one two levels up on documents (doc/lives/{life}/shards/n).
func (l Layout) Owner(ref *firestore.DocumentRef) (doc *firestore.DocumentRef, life string) {
	return l.kind().owner(ref)
}

// CurrentLife is the life of the named counter's document as it is now:
// "" in the guide layout, with no read; ErrNoCounter if it does not exist.
func (l Layout) CurrentLife(ctx context.Context, c *firestore.Client, name string) (string, error) {
	return l.kind().currentLife(ctx, c, name)
}
