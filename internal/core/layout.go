package core

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/internal/core/bytime"
)

// Names of the collections and fields tally reads and writes.
const (
	DefaultCollection = "counters" // guide layout: the collection of counters, configurable
	DefaultShardField = "count"    // guide layout: the shard field, configurable
	ShardsCollection  = "shards"   // default subcollection of shards under each counter
	VotersCollection  = "voters"   // default subcollection: one document per signed-in user's vote
	KeysCollection    = "keys"     // default subcollection: one document per idempotency key of the last TTL
	FieldExpiresAt    = "expires_at"
	FieldNumShards    = "num_shards"
	FieldTotal        = "total"
	FieldAsOf         = "as_of"          // the server time of the snapshot the counts sum
	FieldWritten      = "written"        // counts on documents: when tally last wrote the counts
	FieldBookkeeping  = "_tally"         // counts on documents: the one map field tally keeps its own fields in
	FieldLegacy       = "rollup"         // per-shard bookkeeping of tally before 2; folds delete it
	FieldResharding   = "resharding"     // set while a counter shrinks to one shard, until its other shards are moved
	FieldParentSeen   = "parent_version" // on shard 0 of a counter on one shard: the counted document's update time Increment read
	FieldParentRank   = "parent_rank"    // beside it: the cells the document recorded then (package rank), if it is ranked
	FieldWrites       = "writes"         // beside them: how many writes added to the shard, whatever their amounts; growth follows their rate
	MaxIDLength       = 1500             // Firestore's bound on a document id, in bytes
	MaxNameLength     = 128              // bound on a configured collection's name
	MaxPathLength     = 4096             // bound on a counted document's path: Firestore's 6 KiB per document name, less room for tally's own under it
	MaxShards         = 10000            // bound on num_shards
	DefaultShards     = 1                // shards of a new counter, and of a counted document without num_shards, until the rollup grows it
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

// Count is one count: the field readers read on the counted document, and
// the field of each shard that it sums.
type Count struct {
	Field string
	Shard string
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

// LimitsSuffix names the collection of users' limits beside the
// collection of counters: counters_limits.
const LimitsSuffix = "_limits"

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

// ErrUndeclared is wrapped by every error Check returns for a document or
// field that TALLY_COUNTS does not declare.
var ErrUndeclared = errors.New("not a declared count")

// Check resolves a request's counter and field to the count it names. In
// the guide layout the field is empty (or total); on documents it must be
// one declared for the document's collection, and the error otherwise
// names what is declared.
func (l Layout) Check(name, field string) (Count, error) { return l.kind().check(name, field) }

// ErrAggregate is wrapped by the error Check returns for an aggregate
// field: tally computes it from the app's documents.
var ErrAggregate = errors.New("an aggregate, not a count")

// ErrInvalidID is wrapped by every error ValidID returns.
var ErrInvalidID = errors.New("invalid counter id")

// ValidID reports whether id may name a document, as Firestore's rule for
// document ids has it: 1 to 1,500 bytes of UTF-8 with no '/', not "." or
// "..", and not of the form __name__, which Firestore reserves. A counter
// of the guide layout, a counted document and a child of an aggregated
// collection may each have any such id.
func ValidID(id string) error {
	switch {
	case id == "":
		return fmt.Errorf("%w: empty", ErrInvalidID)
	case len(id) > MaxIDLength:
		return fmt.Errorf("%w: longer than %d bytes", ErrInvalidID, MaxIDLength)
	case id == "." || id == "..":
		return fmt.Errorf("%w: %q is reserved", ErrInvalidID, id)
	case reserved(id):
		return fmt.Errorf("%w: ids of the form __name__ are reserved by Firestore", ErrInvalidID)
	case !utf8.ValidString(id):
		i := invalidUTF8(id)
		return fmt.Errorf("%w: byte 0x%02x at byte %d is not UTF-8", ErrInvalidID, id[i], i)
	case strings.Contains(id, "/"):
		return fmt.Errorf("%w: '/' at byte %d; an id is one segment of a path", ErrInvalidID, strings.Index(id, "/"))
	}
	return nil
}

// reserved reports whether id is of the form __name__.
func reserved(id string) bool {
	return len(id) >= 4 && strings.HasPrefix(id, "__") && strings.HasSuffix(id, "__")
}

// invalidUTF8 is the index of the first byte of s that is not UTF-8.
func invalidUTF8(s string) int {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				return i
			}
		}
	}
	return len(s)
}

// ValidName reports whether name may name a collection of the
// configuration (the collection of counters, tally's subcollections, a
// counted or aggregated collection): 1 to 128 bytes of ASCII letters,
// digits, '_', '-' and '.', not "." or "..", and not of the form
// __name__. Such names go into security rules, Eventarc path patterns and
// shell commands as they are.
func ValidName(name string) error {
	if err := ValidID(name); err != nil {
		return err
	}
	if len(name) > MaxNameLength {
		return fmt.Errorf("%w: longer than %d bytes", ErrInvalidID, MaxNameLength)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.'
		if ok {
			continue
		}
		r, _ := utf8.DecodeRuneInString(name[i:])
		return fmt.Errorf("%w: character %q at byte %d; a collection's name takes ASCII letters, digits, '_', '-' and '.'", ErrInvalidID, r, i)
	}
	return nil
}

// UserKey is a user's uid as it names a document of tally's (a vote, a
// user's limits): '%' and '/' percent-encoded, so that every uid names
// one document and no two uids the same one. A uid that would still not
// be an id (".", "..", __name__) has its first character encoded too.
// Security rules compute it as uid.replace('%', '%25').replace('/', '%2F'),
// and the web client as userKey.
func UserKey(uid string) string {
	k := strings.NewReplacer("%", "%25", "/", "%2F").Replace(uid)
	if k == "." || k == ".." || reserved(k) {
		k = fmt.Sprintf("%%%02X", k[0]) + k[1:]
	}
	return k
}

func truncate(s string) string {
	if len(s) > 40 {
		return strconv.Quote(s[:40] + "...")
	}
	return strconv.Quote(s)
}

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

// FromPublic and ToPublic convert between a Layout and package counter's
// public Layout, which wraps one. The configurations an app builds (of
// packages setup, increment and rollup) hold the public one, so that no
// type of tally's internals shows in their API, and take this one from it
// here. Package counter sets both when it is loaded; a package that
// holds a counter.Layout imports counter, so they are set before use.
var (
	FromPublic func(public any) Layout
	ToPublic   func(Layout) any
)
