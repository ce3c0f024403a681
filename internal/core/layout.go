package core

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/internal/core/bytime"
)

// Layout says where counters live. Use Default, or set Docs for counts on
// the app's documents; empty names take their defaults.
type Layout struct {
	Collection string        // guide layout: top-level collection of counters
	ShardField string        // guide layout: integer field of each shard
	Docs       []Declaration // counts on the app's documents; none: the guide layout
	// Windows of the guide layout's counters, of their total (on documents,
	// each Declaration has its own).
	Windows []bytime.Window
	// Zone is the time zone of windows' buckets (TALLY_TIME_ZONE); nil is UTC.
	Zone *time.Location

	ShardsName string // subcollection of shards under each counted document; "" is "shards"
	VotersName string // subcollection of votes; "" is "voters"
	KeysName   string // subcollection of idempotency keys' records; "" is "keys"
}

// Default is Google's distributed-counter layout: counters/{id}/shards/{n}.count.
func Default() Layout {
	return Layout{Collection: DefaultCollection, ShardField: DefaultShardField}
}

// OnDocs reports whether counts live on the app's documents.
func (l Layout) OnDocs() bool { return len(l.Docs) > 0 }

// IsZero reports whether l is the zero Layout.
func (l Layout) IsZero() bool {
	return l.Collection == "" && l.ShardField == "" && len(l.Docs) == 0
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Subcollection names in force.
func (l Layout) shardsName() string { return orDefault(l.ShardsName, ShardsCollection) }
func (l Layout) votersName() string { return orDefault(l.VotersName, VotersCollection) }
func (l Layout) keysName() string   { return orDefault(l.KeysName, KeysCollection) }

// Subcollections are the names of tally's subcollections under a counted
// document: shards, voters and keys.
func (l Layout) Subcollections() (shards, voters, keys string) {
	return l.shardsName(), l.votersName(), l.keysName()
}

// Validate reports whether the layout names a usable collection and field,
// and distinct subcollections.
func (l Layout) Validate() error {
	if err := ValidName(l.Collection); err != nil {
		return fmt.Errorf("core: collection %q: %w", l.Collection, err)
	}
	if l.ShardField == "" || strings.ContainsAny(l.ShardField, ".`") {
		return fmt.Errorf("core: shard field %q must be a plain, non-empty field name", l.ShardField)
	}
	s, v, k := l.Subcollections()
	for _, n := range []string{s, v, k} {
		if err := ValidName(n); err != nil {
			return fmt.Errorf("core: subcollection %q: %w", n, err)
		}
	}
	if s == v || s == k || v == k {
		return fmt.Errorf("core: the shards, voters and keys subcollections must differ, got %q, %q and %q", s, v, k)
	}
	return validDocs(l.Docs, s, v, k)
}

// Counter is the counted document of the counter named name: the parent
// counters/{id} in the guide layout, the app's document otherwise.
func (l Layout) Counter(c *firestore.Client, name string) *firestore.DocumentRef {
	return l.kind().counter(c, name)
}

// Path is the counted document's path below the database root.
func (l Layout) Path(name string) string { return l.kind().path(name) }

// Shards is the collection of the named counter's shards, of the given
// life of its document ("" in the guide layout).
func (l Layout) Shards(c *firestore.Client, name, life string) *firestore.CollectionRef {
	return l.home(c, name, life).Collection(l.shardsName())
}

// Shard is shard n of the named counter, of the given life.
func (l Layout) Shard(c *firestore.Client, name, life string, n int) *firestore.DocumentRef {
	return l.Shards(c, name, life).Doc(strconv.Itoa(n))
}

// Voter is the vote of user uid on one count of the named counter, in the
// given life: its id is the uid in the guide layout, and field:uid on
// documents, one per count.
func (l Layout) Voter(c *firestore.Client, name, life, field, uid string) *firestore.DocumentRef {
	return l.home(c, name, life).Collection(l.votersName()).Doc(l.VoterID(field, uid))
}

// VoterID is the id of user uid's vote document on the count field: the
// user's key (UserKey) in the guide layout, field:key on documents.
func (l Layout) VoterID(field, uid string) string { return l.kind().voterID(field, uid) }

// Key is the record of an idempotency key on the named counter, in the
// given life, under its scoped hash.
func (l Layout) Key(c *firestore.Client, name, life, hash string) *firestore.DocumentRef {
	return l.home(c, name, life).Collection(l.keysName()).Doc(hash)
}

// Limits is the document that holds how often user uid has incremented
// lately, for the public limits: outside the counters, as it spans them.
func (l Layout) Limits(c *firestore.Client, uid string) *firestore.DocumentRef {
	return c.Collection(l.Collection + LimitsSuffix).Doc(UserKey(uid))
}

// ParseShardPath splits a document path relative to the database root,
// "counters/{id}/shards/{n}" or "posts/{p}/lives/{life}/shards/{n}", into
// the counter's name, the life ("" in the guide layout) and the shard
// number. The shard id must be a non-negative integer written without sign
// or leading zeros, so that one shard has exactly one path; so must a life.
func (l Layout) ParseShardPath(path string) (name, life string, shard int, err error) {
	parts := strings.Split(path, "/")
	k := len(parts)
	if k < 4 || parts[k-2] != l.shardsName() {
		return "", "", 0, fmt.Errorf("core: %q is not a shard: {document}/%s/{n}", path, l.shardsName())
	}
	n, err := strconv.Atoi(parts[k-1])
	if err != nil || n < 0 || strconv.Itoa(n) != parts[k-1] {
		return "", "", 0, fmt.Errorf("core: shard id %q in %q is not a non-negative integer", parts[k-1], path)
	}
	name, life, err = l.kind().shardOwner(path, parts)
	return name, life, n, err
}

// Counts are the counts the named counter holds: total in the guide
// layout, the declared fields of its collection on documents. The name
// must be valid (see CheckName).
func (l Layout) Counts(name string) []Count { return l.kind().counts(name) }

// CheckName reports whether name may name a counter: a valid id in the
// guide layout, a document of a declared collection on documents.
func (l Layout) CheckName(name string) error { return l.kind().checkName(name) }

// Check resolves a request's counter and field to the count it names. In
// the guide layout the field is empty (or total); on documents it must be
// one declared for the document's collection, and the error otherwise
// names what is declared.
func (l Layout) Check(name, field string) (Count, error) { return l.kind().check(name, field) }

// AnyShard reports whether the counter name has a shard document at all
// in the given life, whatever it holds: one read. In the guide layout, a
// counter whose parent does not exist but whose shards do (as Google's
// samples make them) is a counter.
func (l Layout) AnyShard(ctx context.Context, c *firestore.Client, name, life string) (bool, error) {
	refs, err := l.Shards(c, name, life).Select().Limit(1).Documents(ctx).GetAll()
	if err != nil {
		return false, fmt.Errorf("core: list the shards of %s: %w", name, err)
	}
	return len(refs) > 0, nil
}

// Relative is a document's path below the database root ("" for nil).
func Relative(ref *firestore.DocumentRef) string {
	if ref == nil {
		return ""
	}
	_, p, _ := strings.Cut(ref.Path, "/documents/")
	return p
}

// kind is the layout's kind: documents when TALLY_COUNTS declares counts
// on the app's documents, the guide's counters otherwise.
func (l Layout) kind() kind {
	if l.OnDocs() {
		return documents{docs: l.Docs, shards: l.shardsName()}
	}
	return guide{collection: l.Collection, shardField: l.ShardField, shards: l.shardsName(), windows: l.Windows}
}

// home is the document under which tally keeps the named counter's
// shards, voters and keys: the counter itself in the guide layout, the
// given life of the counted document otherwise.
func (l Layout) home(c *firestore.Client, name, life string) *firestore.DocumentRef {
	return l.kind().home(c, name, life)
}

// match is declarations' match over l's.
func (l Layout) match(path string) (Declaration, error) { return declarations(l.Docs).match(path) }

// Matches reports whether the document at path is a counted one.
func (l Layout) Matches(path string) bool { return l.kind().matches(path) }

// CollectionGroups are the collection ids whose documents may be
// counted: the last segment of each declaration, each once.
func (l Layout) CollectionGroups() []string { return l.kind().collectionGroups() }

// WindowsOf are the windows the counter name holds: those of the guide
// layout's counters (Layout.Windows), or of its declaration on documents.
func (l Layout) WindowsOf(name string) []bytime.Window { return l.kind().windowsOf(name) }
