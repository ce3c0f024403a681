// Package layout names the Firestore documents and fields that make up a
// tally counter: the parent counters/{id} that readers read, and its shards
// counters/{id}/shards/{n} that increments write.
package layout

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"cloud.google.com/go/firestore"
)

// Names of the collections and fields tally reads and writes.
const (
	DefaultCollection = "counters" // parent collection, configurable
	DefaultShardField = "count"    // shard field, configurable
	ShardsCollection  = "shards"   // subcollection of each counter
	VotersCollection  = "voters"   // one document per signed-in user whose vote counts
	KeysCollection    = "keys"     // one document per idempotency key of the last TTL
	FieldExpiresAt    = "expires_at"
	FieldNumShards    = "num_shards"
	FieldTotal        = "total"
	FieldAsOf         = "as_of"  // the server time of the snapshot total sums
	FieldLegacy       = "rollup" // per-shard bookkeeping of tally before 2; folds delete it
	MaxIDLength       = 128
	MaxShards         = 10000 // bound on num_shards
)

// Layout says where counters live. The zero value is not valid; use Default.
type Layout struct {
	Collection string // top-level collection of counters
	ShardField string // integer field of each shard
}

// Default is Google's distributed-counter layout: counters/{id}/shards/{n}.count.
func Default() Layout {
	return Layout{Collection: DefaultCollection, ShardField: DefaultShardField}
}

// Validate reports whether the layout names a usable collection and field.
func (l Layout) Validate() error {
	if err := ValidID(l.Collection); err != nil {
		return fmt.Errorf("layout: collection %q: %w", l.Collection, err)
	}
	if l.ShardField == "" || strings.ContainsAny(l.ShardField, ".`") {
		return fmt.Errorf("layout: shard field %q must be a plain, non-empty field name", l.ShardField)
	}
	return nil
}

// Counter is the parent document of counter id.
func (l Layout) Counter(c *firestore.Client, id string) *firestore.DocumentRef {
	return c.Collection(l.Collection).Doc(id)
}

// Shards is the collection of counter id's shards.
func (l Layout) Shards(c *firestore.Client, id string) *firestore.CollectionRef {
	return l.Counter(c, id).Collection(ShardsCollection)
}

// Shard is shard n of counter id.
func (l Layout) Shard(c *firestore.Client, id string, n int) *firestore.DocumentRef {
	return l.Shards(c, id).Doc(strconv.Itoa(n))
}

// Voter is the vote of user uid on counter id.
func (l Layout) Voter(c *firestore.Client, id, uid string) *firestore.DocumentRef {
	return l.Counter(c, id).Collection(VotersCollection).Doc(uid)
}

// Key is the record of an idempotency key on counter id, under its
// scoped hash.
func (l Layout) Key(c *firestore.Client, id, hash string) *firestore.DocumentRef {
	return l.Counter(c, id).Collection(KeysCollection).Doc(hash)
}

// LimitsSuffix names the collection of users' limits beside the
// collection of counters: counters_limits.
const LimitsSuffix = "_limits"

// Limits is the document that holds how often user uid has incremented
// lately, for the public limits: outside the counters, as it spans them.
func (l Layout) Limits(c *firestore.Client, uid string) *firestore.DocumentRef {
	return c.Collection(l.Collection + LimitsSuffix).Doc(uid)
}

// ParseShardPath splits a document path relative to the database root,
// "counters/{id}/shards/{n}", into the counter id and shard number. The shard
// id must be a non-negative integer written without sign or leading zeros,
// so that one shard has exactly one path.
func (l Layout) ParseShardPath(path string) (id string, shard int, err error) {
	parts := strings.Split(path, "/")
	if len(parts) != 4 || parts[0] != l.Collection || parts[2] != ShardsCollection || parts[1] == "" {
		return "", 0, fmt.Errorf("layout: %q is not %s/{id}/%s/{n}", path, l.Collection, ShardsCollection)
	}
	n, err := strconv.Atoi(parts[3])
	if err != nil || n < 0 || strconv.Itoa(n) != parts[3] {
		return "", 0, fmt.Errorf("layout: shard id %q in %q is not a non-negative integer", parts[3], path)
	}
	return parts[1], n, nil
}

// ErrInvalidID is wrapped by every error ValidID returns.
var ErrInvalidID = errors.New("invalid counter id")

// ValidID reports whether id may name a counter: 1 to 128 bytes of ASCII
// letters, digits, '_', '-' and '.'; not "." or "..", and not of the
// form __name__, which Firestore reserves.
func ValidID(id string) error {
	switch {
	case id == "":
		return fmt.Errorf("%w: empty", ErrInvalidID)
	case len(id) > MaxIDLength:
		return fmt.Errorf("%w: longer than %d bytes", ErrInvalidID, MaxIDLength)
	case id == "." || id == "..":
		return fmt.Errorf("%w: %q is reserved", ErrInvalidID, id)
	case len(id) >= 4 && strings.HasPrefix(id, "__") && strings.HasSuffix(id, "__"):
		return fmt.Errorf("%w: ids of the form __name__ are reserved by Firestore", ErrInvalidID)
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.'
		if ok {
			continue
		}
		what := fmt.Sprintf("byte 0x%02x", c)
		if r, size := utf8.DecodeRuneInString(id[i:]); r != utf8.RuneError || size > 1 {
			what = fmt.Sprintf("character %q", r)
		}
		return fmt.Errorf("%w: %s at byte %d; use ASCII letters, digits, '_', '-' and '.'", ErrInvalidID, what, i)
	}
	return nil
}
