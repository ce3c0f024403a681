package extension

import (
	"fmt"
	"math"
	"regexp"
	"strings"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/internal/core"
)

// CountEdge bounds a count TALLY_COUNTS declares that a move adds to:
// tally's Increment writes its shards with no read while the count is
// within it, so that increments in flight can never take the count past
// int64 (see package adder), and a move keeps it there too.
const CountEdge = core.CountEdge

// partialID is what the id of a partial of the extension's workers is:
// one to four tabs, then a prefix of shard ids.
var partialID = regexp.MustCompile(`^\t{1,4}[A-Za-z0-9_-]{0,4}$`)

// taking is what one move takes of a document's shards and partials, and
// what it leaves, decided from what it read (pure: no I/O).
type taking struct {
	decl    Counter
	counted map[string]bool // the declared fields TALLY_COUNTS counts on the document
	doc     map[string]any  // the document's data as read; nil if it does not exist
	read    time.Time       // the move's read time
	quiet   time.Duration   // a shard written within this of read is held
	zeros   bool            // take shards that hold nothing but zeros

	moved            Amounts
	take             []*firestore.DocumentRef
	left             map[string]error
	held             map[string]time.Time // by id: the shard's update time
	first            time.Time            // the earliest create time of a held shard
	quietAt          time.Time            // when the last held shard will have been quiet for quiet
	shards, partials int
}

// add decides what becomes of one shard or partial s: taken, held (a
// client wrote it within the quiet time, and may still have that write in
// flight), left with why (what it holds is not the declared counts, or
// would take the document's count past what it can hold), or, holding
// only zeros, neither (nothing to move; a takeover takes it).
func (t *taking) add(s *firestore.DocumentSnapshot) {
	id := s.Ref.ID
	partial := strings.HasPrefix(id, partialPrefix)
	if !partial && !ShardID.MatchString(id) || partial && !partialID.MatchString(id) {
		t.left[id] = fmt.Errorf("%q is neither a client's shard id (letters, digits, '-' and '_') nor a partial's", id)
		return
	}
	a, err := AmountsOf(id, s.Data())
	if err == nil {
		err = t.declared(a)
	}
	if err != nil {
		t.left[id] = err
		return
	}
	if !partial && t.quiet > 0 && t.read.Sub(s.UpdateTime) < t.quiet {
		t.held[id] = s.UpdateTime
		if t.first.IsZero() || s.CreateTime.Before(t.first) {
			t.first = s.CreateTime
		}
		if at := s.UpdateTime.Add(t.quiet); at.After(t.quietAt) {
			t.quietAt = at
		}
		return
	}
	if a.zero() && !t.zeros {
		return
	}
	next := Amounts{}
	for k, v := range t.moved {
		next[k] = v
	}
	if err := next.Add(a); err != nil {
		t.left[id] = err
		return
	}
	if err := t.fits(next); err != nil {
		t.left[id] = err
		return
	}
	t.moved = next
	t.take = append(t.take, s.Ref)
	if partial {
		t.partials++
	} else {
		t.shards++
	}
}

// declared checks a shard's amounts against the declaration: every
// field one it declares, every amount a whole number.
func (t *taking) declared(a Amounts) error {
	for _, p := range a.Paths() {
		name := strings.Join(p, ".")
		if !t.decl.Counts(p) {
			return fmt.Errorf("%s is no counter TALLY_EXTENSION_COUNTERS declares on %s (%s)", name, t.decl.Collection, strings.Join(t.decl.Fields, ", "))
		}
		if _, ok := a.Of(p).(int64); !ok {
			return fmt.Errorf("%s holds %v, not a whole number: a count moves in whole numbers", name, a.Of(p))
		}
	}
	return nil
}

// fits checks that the document can take moved: each field an integer
// (or nothing yet) whose sum with what is moved stays within int64, and,
// for a count TALLY_COUNTS declares, within CountEdge.
func (t *taking) fits(moved Amounts) error {
	for _, p := range moved.Paths() {
		name := strings.Join(p, ".")
		var has any
		if t.doc != nil {
			has = valueAt(t.doc, p)
		}
		n, ok := has.(int64)
		if has != nil && !ok {
			return fmt.Errorf("the document's %s holds %v, not a whole number to add to", name, has)
		}
		by := moved.Of(p).(int64)
		limit := int64(math.MaxInt64)
		if t.counted[name] {
			limit = CountEdge
		}
		if by > 0 && n > limit-by || by < 0 && n < -limit-by {
			return fmt.Errorf("the document's %s (%d) would pass %d with %d more: a count stays within it", name, n, limit, by)
		}
	}
	return nil
}

// asOf is the time every write at or before which of the document's
// shards and partials is in its fields, after this move: its read time,
// or, with shards held, just before the first write of the first of them
// (a shard holds the writes since its creation).
func (t *taking) asOf() time.Time {
	if len(t.held) == 0 {
		return t.read
	}
	return t.first.Add(-time.Microsecond)
}

// zero reports whether every amount of a is 0.
func (a Amounts) zero() bool {
	for _, v := range a {
		if n, ok := v.(int64); !ok || n != 0 {
			return false
		}
	}
	return true
}

// valueAt is the value at field path p of data, nil if none.
func valueAt(data map[string]any, p []string) any {
	var v any = data
	for _, s := range p {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[s]
	}
	return v
}
