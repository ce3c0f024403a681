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
// under each life of it, with the fields TALLY_COUNTS declares). Each kind
// holds the settings it answers with, and Layout, which holds the
// settings of both as they are configured, asks its kind wherever they
// differ; what they share is Layout's alone.
type kind interface {
	// counter is the counted document of the counter named name, path
	// its path, and home the document tally's subcollections of the given
	// life of it are under.
	counter(c *firestore.Client, name string) *firestore.DocumentRef
	path(name string) string
	home(c *firestore.Client, name, life string) *firestore.DocumentRef
	// voterID is the id of user uid's vote on the count field.
	voterID(field, uid string) string
	// shardOwner reads the counter and life of the shard at path, split
	// at '/' into segs, whose own id has been read already.
	shardOwner(path string, segs []string) (name, life string, err error)
	// matches reports whether the document at path is a counted one,
	// checkName whether name may name a counter.
	matches(path string) bool
	checkName(name string) error

	// counts, check, windowsOf and aggregates: what a counter counts.
	counts(name string) []Count
	check(name, field string) (Count, error)
	windowsOf(name string) []bytime.Window
	aggregates(name string) []aggregate.Aggregate

	// lifeOf, lifeIn, owner and currentLife: the lives of a counted
	// document.
	lifeOf(created time.Time) string
	lifeIn(data map[string]any, created time.Time) string
	owner(ref *firestore.DocumentRef) (doc *firestore.DocumentRef, life string)
	currentLife(ctx context.Context, c *firestore.Client, name string) (string, error)

	// bookkeeping, fieldPath, written and writtenPath: where tally's own
	// fields are on a counted document.
	bookkeeping(data map[string]any) map[string]any
	fieldPath(field string) firestore.FieldPath
	written(data map[string]any, updated time.Time) time.Time
	writtenPath() firestore.FieldPath

	// collectionGroups are the collection ids of the counted documents.
	collectionGroups() []string
}
