package counter

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/internal/core"
)

// readAndSum reads the counted documents names (a part's: in the order a
// listing gives them, by path) with one batched read, and sums the shards
// of all of them with one query of the shards' collection group, from the
// first document's path to past the last, at the batch's earliest read
// time: two reads where a fold of each counter would read its document and
// aggregate its shards, which the emulator answers by a scan of all it
// holds. A document whose sum its shards' values cannot tell (one holds a
// count that is no integer, or the sum passes int64), or that is missing,
// or was folded at that read time or later, is left out: a fold reads and
// sums it on its own. Its two calls take two of the Timeout, and more
// for more than a part's names.
func (c *Client) readAndSum(ctx context.Context, names []string) (map[string]*core.Known, error) {
	if len(names) == 0 {
		return nil, nil
	}
	ctx, cancel := c.bound(ctx, 2+2*len(names)/DefaultPartSize)
	defer cancel()
	refs := make([]*firestore.DocumentRef, len(names))
	for i, n := range names {
		refs[i] = c.layout.Counter(c.fs, n)
	}
	snaps, err := c.fs.GetAll(ctx, refs)
	if err != nil {
		return nil, fmt.Errorf("counter: read %d documents: %w", len(names), err)
	}
	at, now := snaps[0].ReadTime, time.Now()
	for _, s := range snaps {
		if s.ReadTime.Before(at) {
			at = s.ReadTime
		}
	}
	at = core.Precise(at)
	known := make(map[string]*core.Known, len(names))
	first, last := names[0], names[0]
	for i, s := range snaps {
		known[names[i]] = c.layout.NewKnown(names[i], s, at, now)
		first, last = pathMin(first, names[i]), pathMax(last, names[i])
	}
	unknown, err := c.sumAll(ctx, first, last, known, at)
	if err != nil {
		return nil, err
	}
	for name, k := range known {
		if unknown[name] || !k.Parent.Exists || !k.Parent.AsOf.Before(at) {
			delete(known, name)
		}
	}
	return known, nil
}

// sumAll adds each shard of the documents in known, of their lives, into
// their sums, at the read time at: one query of the shards' collection
// group, ordered by path, from the document first on, to past the
// document last. It returns the names whose shards' values it could not
// add up as aggregation would.
func (c *Client) sumAll(ctx context.Context, first, last string, known map[string]*core.Known, at time.Time) (map[string]bool, error) {
	shards, _, _ := c.layout.Subcollections()
	q := c.fs.CollectionGroup(shards).OrderBy(firestore.DocumentID, firestore.Asc).StartAt(c.layout.Counter(c.fs, first))
	unknown := map[string]bool{}
	err := c.fs.RunTransaction(ctx, func(ctx context.Context, tx *firestore.Transaction) error {
		clear(unknown)
		for _, k := range known {
			clear(k.Sum.Values)
			clear(k.Sum.Shards)
			k.Shards = k.Shards[:0]
		}
		return core.Each(tx.Documents(q), func(snap *firestore.DocumentSnapshot) (bool, error) {
			name, life, n, err := c.layout.ParseShardPath(relative(snap.Ref))
			if err != nil {
				return true, nil // not a counter's shard
			}
			if pathMax(name, last) != last {
				return false, nil
			}
			if k := known[name]; k != nil && life == k.Parent.Life && !unknown[name] {
				k.Shards = append(k.Shards, n)
				unknown[name] = !k.Sum.Add(c.layout.Counts(name), snap)
			}
			return true, nil
		})
	}, firestore.ReadOnly, firestore.TransactionReadTime(at))
	if err != nil {
		return nil, fmt.Errorf("counter: sum the shards of %d documents at %s: %w", len(known), at.Format(time.RFC3339Nano), err)
	}
	return unknown, nil
}

// pathMin and pathMax are the first and the last of two document paths in
// Firestore's order: segment by segment.
func pathMin(a, b string) string {
	if slices.Compare(strings.Split(a, "/"), strings.Split(b, "/")) <= 0 {
		return a
	}
	return b
}

func pathMax(a, b string) string {
	if pathMin(a, b) == a {
		return b
	}
	return a
}
