package core

import (
	"context"
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

// Lives is the collection of a counted document's lives (none in the
// guide layout): a document id for each life that tally wrote something
// for, whose subcollections hold it.
func (l Layout) Lives(c *firestore.Client, name string) *firestore.CollectionRef {
	return l.Counter(c, name).Collection(LivesCollection)
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
