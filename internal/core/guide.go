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
// at its top, and no lives: nothing but tally writes it.
type guide struct{}

func (guide) counter(l Layout, c *firestore.Client, name string) *firestore.DocumentRef {
	return c.Collection(l.Collection).Doc(name)
}

func (guide) path(l Layout, name string) string { return l.Collection + "/" + name }

func (guide) home(l Layout, c *firestore.Client, name, _ string) *firestore.DocumentRef {
	return guide{}.counter(l, c, name)
}

func (guide) voterID(l Layout, _, uid string) string { return UserKey(uid) }

func (guide) shardOwner(l Layout, path string, segs []string) (name, life string, err error) {
	if len(segs) != 4 || segs[0] != l.Collection || segs[1] == "" {
		return "", "", fmt.Errorf("core: %q is not %s/{id}/%s/{n}", path, l.Collection, l.shardsName())
	}
	return segs[1], "", ValidID(segs[1])
}

func (guide) matches(l Layout, path string) bool {
	id, ok := strings.CutPrefix(path, l.Collection+"/")
	return ok && ValidID(id) == nil
}

func (guide) checkName(l Layout, name string) error { return ValidID(name) }

func (guide) counts(l Layout, _ string) []Count {
	return []Count{{Field: FieldTotal, Shard: l.ShardField}}
}

func (guide) check(l Layout, name, field string) (Count, error) {
	if err := ValidID(name); err != nil {
		return Count{}, fmt.Errorf("counter: %w", err)
	}
	if field != "" && field != FieldTotal {
		return Count{}, fmt.Errorf("%w: %s: a counter here is %s/{id}, whose one count is its %s; give its id alone",
			ErrUndeclared, truncate(field), l.Collection, FieldTotal)
	}
	return Count{Field: FieldTotal, Shard: l.ShardField}, nil
}

func (guide) windowsOf(l Layout, _ string) []bytime.Window { return l.Windows }

func (guide) aggregates(l Layout, _ string) []aggregate.Aggregate { return nil }

func (guide) lifeOf(l Layout, _ time.Time) string { return "" }

func (guide) owner(l Layout, ref *firestore.DocumentRef) (*firestore.DocumentRef, string) {
	return ref.Parent.Parent, ""
}

func (guide) currentLife(l Layout, _ context.Context, _ *firestore.Client, _ string) (string, error) {
	return "", nil
}

func (guide) bookkeeping(l Layout, data map[string]any) map[string]any { return data }

func (guide) fieldPath(l Layout, field string) firestore.FieldPath { return firestore.FieldPath{field} }

// written is the parent's update time: nothing else writes it.
func (guide) written(l Layout, _ map[string]any, updated time.Time) time.Time { return updated }

func (guide) writtenPath(l Layout) firestore.FieldPath { return nil }

func (guide) collectionGroups(l Layout) []string { return []string{l.Collection} }
