package core

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"cloud.google.com/go/firestore"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tallycounters/tally/internal/core/aggregate"
	"github.com/tallycounters/tally/internal/core/bytime"
)

// documents is the kind of Layout of counts on the app's own documents:
// a counter is named by its document's path (posts/p1), holds the count
// fields its collection's Declaration gives, and keeps its shards, votes
// and keys under the life of the document they are for
// (posts/p1/lives/{life}/shards/{n}), and tally's bookkeeping in the one
// map field _tally. It holds the settings of its own that it answers
// with.
type documents struct {
	docs   declarations // what each collection counts
	shards string       // the subcollection of shards
}

func (d documents) counter(c *firestore.Client, name string) *firestore.DocumentRef {
	return c.Doc(name)
}

func (d documents) path(name string) string { return name }

func (d documents) home(c *firestore.Client, name, life string) *firestore.DocumentRef {
	return d.counter(c, name).Collection(LivesCollection).Doc(life)
}

func (d documents) voterID(field, uid string) string { return field + ":" + UserKey(uid) }

func (d documents) shardOwner(path string, segs []string) (name, life string, err error) {
	k := len(segs)
	if k < 6 || segs[k-4] != LivesCollection || !validLife(segs[k-3]) {
		return "", "", fmt.Errorf("core: %q is not {document}/%s/{life}/%s/{n}", path, LivesCollection, d.shards)
	}
	doc := strings.Join(segs[:k-4], "/")
	decl, err := d.docs.match(doc)
	if err != nil {
		return "", "", err
	}
	if len(decl.Fields) == 0 {
		return "", "", fmt.Errorf("%w: %s holds aggregates only, and no shards", ErrUndeclared, truncate(doc))
	}
	return doc, segs[k-3], nil
}

func (d documents) matches(path string) bool {
	_, err := d.docs.match(path)
	return err == nil
}

func (d documents) checkName(name string) error {
	_, err := d.docs.match(name)
	return err
}

func (d documents) counts(name string) []Count {
	decl, err := d.docs.match(name)
	if err != nil {
		return nil
	}
	out := make([]Count, len(decl.Fields))
	for i, f := range decl.Fields {
		out[i] = Count{Field: f, Shard: f}
	}
	return out
}

func (d documents) check(name, field string) (Count, error) {
	decl, err := d.docs.match(name)
	if err != nil {
		return Count{}, err
	}
	if slices.Contains(decl.Fields, field) {
		return Count{Field: field, Shard: field}, nil
	}
	for _, a := range decl.Aggregates {
		if a.Field == field {
			return Count{}, fmt.Errorf("%w: %s on %s is %s, which tally keeps from those documents; it cannot be incremented", ErrAggregate, field, decl.Collection, a)
		}
	}
	if len(decl.Fields) == 0 {
		return Count{}, fmt.Errorf("%w: %s holds aggregates only (%s), which cannot be incremented", ErrUndeclared, truncate(name), d.docs.declared())
	}
	if field == "" {
		return Count{}, fmt.Errorf("%w: give the field to count on %s: one of %s", ErrUndeclared, name, strings.Join(decl.Fields, ", "))
	}
	return Count{}, fmt.Errorf("%w: %s is not counted on %s; its counts are %s", ErrUndeclared, truncate(field), decl.Collection, strings.Join(decl.Fields, ", "))
}

func (d documents) windowsOf(name string) []bytime.Window {
	decl, err := d.docs.match(name)
	if err != nil {
		return nil
	}
	return decl.Windows
}

func (d documents) aggregates(name string) []aggregate.Aggregate {
	decl, err := d.docs.match(name)
	if err != nil {
		return nil
	}
	return decl.Aggregates
}

// lifeOf is the document's create time, in microseconds.
func (d documents) lifeOf(created time.Time) string {
	return strconv.FormatInt(created.UnixMicro(), 10)
}

// lifeIn is the life the document's bookkeeping records, or else the
// one its create time begins.
func (d documents) lifeIn(data map[string]any, created time.Time) string {
	if life, ok := d.bookkeeping(data)[FieldLife].(string); ok && validLife(life) {
		return life
	}
	return d.lifeOf(created)
}

// owner is the document two levels up from the shard's own home
// (doc/lives/{life}/shards/n), or its home where that is not a life.
func (d documents) owner(ref *firestore.DocumentRef) (*firestore.DocumentRef, string) {
	home := ref.Parent.Parent
	if home == nil || home.Parent == nil || home.Parent.ID != LivesCollection {
		return home, ""
	}
	return home.Parent.Parent, home.ID
}

func (d documents) currentLife(ctx context.Context, c *firestore.Client, name string) (string, error) {
	snap, err := d.counter(c, name).Get(ctx)
	switch {
	case status.Code(err) == codes.NotFound:
		return "", fmt.Errorf("core: %s: %w", name, ErrNoCounter)
	case err != nil:
		return "", fmt.Errorf("core: read %s: %w", name, err)
	}
	return d.lifeIn(snap.Data(), snap.CreateTime), nil
}

func (d documents) bookkeeping(data map[string]any) map[string]any {
	m, _ := data[FieldBookkeeping].(map[string]any)
	return m
}

func (d documents) fieldPath(field string) firestore.FieldPath {
	return firestore.FieldPath{FieldBookkeeping, field}
}

// written is _tally.written, or, when the document's update time is at
// most WrittenSlack after that, the update time: then no write of the
// app's came between, and the update time is the commit's own, exactly;
// or the app wrote just after, and the fold spacing runs from its write
// instead, which only ever waits longer.
func (d documents) written(data map[string]any, updated time.Time) time.Time {
	t, _ := d.bookkeeping(data)[FieldWritten].(time.Time)
	if !t.IsZero() && !updated.Before(t) && updated.Sub(t) <= WrittenSlack {
		return updated
	}
	return t
}

func (d documents) writtenPath() firestore.FieldPath {
	return d.fieldPath(FieldWritten)
}

func (d documents) collectionGroups() []string {
	var out []string
	for _, decl := range d.docs {
		coll := decl.Collection
		if decl.One() {
			coll = coll[:strings.LastIndex(coll, "/")]
		}
		last := coll[strings.LastIndex(coll, "/")+1:]
		if !slices.Contains(out, last) {
			out = append(out, last)
		}
	}
	return out
}
