package core

import (
	"context"
	"fmt"
	"strings"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/internal/core/aggregate"
	"github.com/tallycounters/tally/internal/core/bytime"
)

// guide is the kind of Layout of Google's distributed-counter guide:
// counters/{id}, with its shards under it at counters/{id}/shards/{n}, one
// count (its total, summing the shards' ShardField), tally's bookkeeping
// at its top, and no lives: nothing but tally writes it. It holds the
// settings of its own that it answers with.
type guide struct {
	collection string          // the collection of counters
	shardField string          // the integer field of each shard
	shards     string          // the subcollection of shards
	windows    []bytime.Window // of each counter's total
}

func (g guide) counter(c *firestore.Client, name string) *firestore.DocumentRef {
	return c.Collection(g.collection).Doc(name)
}

func (g guide) path(name string) string { return g.collection + "/" + name }

func (g guide) home(c *firestore.Client, name, _ string) *firestore.DocumentRef {
	return g.counter(c, name)
}

func (g guide) voterID(_, uid string) string { return UserKey(uid) }

func (g guide) shardOwner(path string, segs []string) (name, life string, err error) {
	if len(segs) != 4 || segs[0] != g.collection || segs[1] == "" {
		return "", "", fmt.Errorf("core: %q is not %s/{id}/%s/{n}", path, g.collection, g.shards)
	}
	return segs[1], "", ValidID(segs[1])
}

func (g guide) matches(path string) bool {
	id, ok := strings.CutPrefix(path, g.collection+"/")
	return ok && ValidID(id) == nil
}

func (g guide) checkName(name string) error { return ValidID(name) }

func (g guide) counts(_ string) []Count {
	return []Count{{Field: FieldTotal, Shard: g.shardField}}
}

func (g guide) check(name, field string) (Count, error) {
	if err := ValidID(name); err != nil {
		return Count{}, fmt.Errorf("counter: %w", err)
	}
	if field != "" && field != FieldTotal {
		return Count{}, fmt.Errorf("%w: %s: a counter here is %s/{id}, whose one count is its %s; give its id alone",
			ErrUndeclared, truncate(field), g.collection, FieldTotal)
	}
	return Count{Field: FieldTotal, Shard: g.shardField}, nil
}

func (g guide) windowsOf(_ string) []bytime.Window { return g.windows }

func (g guide) aggregates(_ string) []aggregate.Aggregate { return nil }

func (g guide) lifeOf(_ time.Time) string { return "" }

func (g guide) lifeIn(map[string]any, time.Time) string { return "" }

func (g guide) owner(ref *firestore.DocumentRef) (*firestore.DocumentRef, string) {
	return ref.Parent.Parent, ""
}

func (g guide) currentLife(_ context.Context, _ *firestore.Client, _ string) (string, error) {
	return "", nil
}

func (g guide) bookkeeping(data map[string]any) map[string]any { return data }

func (g guide) fieldPath(field string) firestore.FieldPath { return firestore.FieldPath{field} }

// written is the parent's update time: nothing else writes it.
func (g guide) written(_ map[string]any, updated time.Time) time.Time { return updated }

func (g guide) writtenPath() firestore.FieldPath { return nil }

func (g guide) collectionGroups() []string { return []string{g.collection} }
