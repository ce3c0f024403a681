package fold

import (
	"context"
	"fmt"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/internal/core"
)

// NewKnown is what a read of the counted document id tells, with no
// shard summed yet: its sum is 0 at the read time at.
func NewKnown(l core.Layout, id string, snap *firestore.DocumentSnapshot, at, returned time.Time) *Known {
	p := core.ParentFrom(l, id, snap, returned)
	return &Known{Parent: p, Sum: newSum(at, p.Life, len(l.Counts(id)))}
}

// ReadAll reads the counted documents names (a part's: in the order a
// listing gives them, by path) with one batched read, and sums the shards
// of all of them with one query of the shards' collection group, from the
// first document's path to past the last, at the batch's earliest read
// time: two reads where a fold of each counter would read its document and
// aggregate its shards, which the emulator answers by a scan of all it
// holds. A document whose sum its shards' values cannot tell (one holds a
// count that is no integer, or the sum passes int64), or that is missing,
// or was folded at that read time or later, is left out: a fold reads and
// sums it on its own.
func (f *Folder) ReadAll(ctx context.Context, names []string) (map[string]*Known, error) {
	if len(names) == 0 {
		return nil, nil
	}
	refs := make([]*firestore.DocumentRef, len(names))
	for i, n := range names {
		refs[i] = f.layout.Counter(f.client, n)
	}
	snaps, err := f.client.GetAll(ctx, refs)
	if err != nil {
		return nil, fmt.Errorf("fold: read %d documents: %w", len(names), err)
	}
	at, now := snaps[0].ReadTime, time.Now()
	for _, s := range snaps {
		if s.ReadTime.Before(at) {
			at = s.ReadTime
		}
	}
	at = core.Precise(at)
	known := make(map[string]*Known, len(names))
	first, last := names[0], names[0]
	for i, s := range snaps {
		known[names[i]] = NewKnown(f.layout, names[i], s, at, now)
		first, last = pathMin(first, names[i]), pathMax(last, names[i])
	}
	unknown, err := f.sumAll(ctx, first, last, known, at)
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
