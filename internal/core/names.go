package core

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tallycounters/tally/layout"
)

// Names of the collections and fields tally reads and writes.
const (
	DefaultCollection = layout.DefaultCollection // guide layout: the collection of counters, configurable
	DefaultShardField = layout.DefaultShardField // guide layout: the shard field, configurable
	ShardsCollection  = layout.DefaultShards     // default subcollection of shards under each counter
	VotersCollection  = layout.DefaultVoters     // default subcollection: one document per signed-in user's vote
	KeysCollection    = layout.DefaultKeys       // default subcollection: one document per idempotency key of the last TTL
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

// CountEdge bounds the counts that tally adds to with no read: while a
// count is within ±CountEdge (2^62), an increment of at most a plain step
// is written blind, as increments in flight cannot take it past int64
// before the cache that said so expires; beyond it, or for a larger
// step, each increment reads the count in its commit's transaction and
// is refused if it would pass int64 (package adder).
const CountEdge int64 = 1 << 62

// Count is one count: the field readers read on the counted document, and
// the field of each shard that it sums.
type Count struct {
	Field string
	Shard string
}

// LimitsSuffix names the collection of users' limits beside the
// collection of counters: counters_limits.
const LimitsSuffix = "_limits"

// ErrUndeclared is wrapped by every error Check returns for a document or
// field that TALLY_COUNTS does not declare.
var ErrUndeclared = errors.New("not a declared count")

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

// LivesCollection holds, under a counted document, one document id per
// life of it, each with that life's shards, voters and keys.
const LivesCollection = "lives"

// FieldLife is, in a counted document's _tally map, the life whose counts
// it holds.
const FieldLife = "life"

// validLife reports whether s may name a life: a non-negative integer
// written without sign or leading zeros.
func validLife(s string) bool {
	n, err := strconv.ParseInt(s, 10, 64)
	return err == nil && n >= 0 && strconv.FormatInt(n, 10) == s
}

// WrittenSlack bounds how far before its commit the server may date the
// request that wrote _tally.written: a server timestamp is the time the
// request was processed, which comes before its commit's update time (by
// up to tens of milliseconds on the emulator, measured), never after.
const WrittenSlack = time.Second
