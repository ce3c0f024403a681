package core

import (
	"context"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/internal/core/aggregate"
	"github.com/tallycounters/tally/internal/core/bytime"
)

// A Layout is of one of two kinds, which say where a counter's documents
// are and what it counts: the guide's counters (guide: counters/{id},
// whose shards are under it, and whose one count is its total) or counts
// on the app's own documents (documents: posts/{p}, whose shards are
// under each life of it, with the fields TALLY_COUNTS declares). Layout
// holds the settings of both and asks its kind wherever they differ,
// giving it those settings (a kind holds none, so that asking it costs
// nothing); what they share is Layout's alone.
type kind interface {
	// counter is the counted document of the counter named name, path
	// its path, and home the document tally's subcollections of the given
	// life of it are under.
	counter(l Layout, c *firestore.Client, name string) *firestore.DocumentRef
	path(l Layout, name string) string
	home(l Layout, c *firestore.Client, name, life string) *firestore.DocumentRef
	// voterID is the id of user uid's vote on the count field.
	voterID(l Layout, field, uid string) string
	// shardOwner reads the counter and life of the shard at path, split
	// at '/' into segs, whose own id has been read already.
	shardOwner(l Layout, path string, segs []string) (name, life string, err error)
	// matches reports whether the document at path is a counted one,
	// checkName whether name may name a counter.
	matches(l Layout, path string) bool
	checkName(l Layout, name string) error

	// counts, check, windowsOf and aggregates: what a counter counts.
	counts(l Layout, name string) []Count
	check(l Layout, name, field string) (Count, error)
	windowsOf(l Layout, name string) []bytime.Window
	aggregates(l Layout, name string) []aggregate.Aggregate

	// lifeOf, owner and currentLife: the lives of a counted document.
	lifeOf(l Layout, created time.Time) string
	owner(l Layout, ref *firestore.DocumentRef) (doc *firestore.DocumentRef, life string)
	currentLife(l Layout, ctx context.Context, c *firestore.Client, name string) (string, error)

	// bookkeeping, fieldPath, written and writtenPath: where tally's own
	// fields are on a counted document.
	bookkeeping(l Layout, data map[string]any) map[string]any
	fieldPath(l Layout, field string) firestore.FieldPath
	written(l Layout, data map[string]any, updated time.Time) time.Time
	writtenPath(l Layout) firestore.FieldPath

	// collectionGroups are the collection ids of the counted documents.
	collectionGroups(l Layout) []string
}

// kind is the layout's kind: documents when TALLY_COUNTS declares counts
// on the app's documents, the guide's counters otherwise.
func (l Layout) kind() kind {
	if l.OnDocs() {
		return documents{}
	}
	return guide{}
}
