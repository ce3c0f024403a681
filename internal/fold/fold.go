package fold

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/googleapis/gax-go/v2"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/core/aggregate"
)

// Read gets the counted document as it is now.
func (f *Folder) Read(ctx context.Context, id string) (core.Parent, error) {
	snap, err := f.layout.Counter(f.client, id).Get(ctx)
	if err != nil && status.Code(err) != codes.NotFound {
		return core.Parent{}, fmt.Errorf("fold: read %s: %w", id, err)
	}
	return core.ParentFrom(f.layout, id, snap, time.Now()), nil
}

// Gather reads what a fold of the document id, as p holds it, takes
// beside its sum s: the counts at the starts of buckets it crosses
// (ReadBoundaries, if s holds counts), and each part of children refolded
// at partsAt (SumParts, into s.Parts). Every fold is a sum, Gather, and
// Write: Rollup's, the boundary job's and Fold's alike; they differ in
// the sum they start from.
func (f *Folder) Gather(ctx context.Context, id string, p core.Parent, s *Sum, children []aggregate.Child, partsAt, now time.Time) error {
	if err := f.ReadBoundaries(ctx, id, p, s, now); err != nil {
		return err
	}
	if len(children) == 0 {
		return nil
	}
	parts, err := f.SumParts(ctx, id, p, children, partsAt)
	s.Parts = parts
	return err
}

// waitSpacing waits out what is left of the fold spacing since p's last write,
// if anything is: waited says it did (p is then to be read again), err
// that ctx ended first.
func (f *Folder) waitSpacing(ctx context.Context, p core.Parent) (waited bool, err error) {
	wait := p.Written.Add(f.spacing).Sub(p.Anchor)
	if !p.Exists || wait <= 0 {
		return false, nil
	}
	return true, gax.Sleep(ctx, wait+time.Millisecond)
}

// Fold folds id now: it reads the parent, waits out the rest of the spacing
// if the parent was written within it, sums the shards at the time of that
// read, refolds every part of its aggregates, and writes the sums. It is
// what Reset and Reconcile do; events need no such call. A document of
// many parts is folded in steps, each written as it is done (SumParts
// bounds a step), until every part is refolded since the first; ctx
// bounds the whole. A missing parent is ErrNoCounter. The outcome's
// Before is the counts when first read.
func (f *Folder) Fold(ctx context.Context, id string) (Outcome, error) {
	return f.FoldKnown(ctx, id, nil)
}

// FoldKnown is Fold, starting from what k knows of id, if not nil and
// the document exists: its first step neither reads the document nor
// sums its shards; any step after reads and sums, as Fold's do.
func (f *Folder) FoldKnown(ctx context.Context, id string, k *Known) (Outcome, error) {
	var first *Outcome
	var since time.Time // the first step's read time: every part is refolded at or after it
	for {
		p, s, err := f.readSum(ctx, id, k)
		k = nil
		if err != nil {
			return Outcome{}, err
		}
		if !p.Exists {
			// In the guide layout, shards with no parent (as Google's
			// samples make them) are a counter: the fold makes its parent.
			some := false
			if !f.layout.OnDocs() {
				if some, err = f.anyShard(ctx, id, ""); err != nil {
					return Outcome{}, err
				}
			}
			if !some {
				return Outcome{}, fmt.Errorf("fold: fold %s: %w", id, core.ErrNoCounter)
			}
		}
		if waited, err := f.waitSpacing(ctx, p); err != nil {
			return Outcome{}, fmt.Errorf("fold: fold %s: %w", id, err)
		} else if waited {
			continue
		}
		if s == nil {
			sum, err := f.SumAt(ctx, id, p.Life, p.Anchor)
			if err != nil {
				return Outcome{}, err
			}
			s = &sum
		}
		if since.IsZero() {
			since = s.At
		}
		if err := f.Gather(ctx, id, p, s, f.partsBefore(id, p, since), s.At, time.Now()); err != nil {
			return Outcome{}, err
		}
		fold, next, err := f.Write(ctx, id, p, *s, 0)
		if errors.Is(err, ErrStale) {
			continue
		}
		if err != nil {
			return Outcome{}, err
		}
		if first == nil {
			first = &fold
		} else {
			fold.Before, fold.AggregatesBefore, fold.Parts = first.Before, first.AggregatesBefore, first.Parts+fold.Parts
			first = &fold
		}
		if !next.Exists || len(f.partsBefore(id, next, since)) == 0 {
			return fold, nil
		}
	}
}

// partsBefore names the parts of the document id, as p holds them, last
// refolded before since, and each aggregated source it holds none of:
// what a fold from scratch has left to refold, each part whole.
func (f *Folder) partsBefore(id string, p core.Parent, since time.Time) []aggregate.Child {
	var out []aggregate.Child
	for _, c := range f.AllParts(id, p) {
		if c.ID == "" && len(p.Parts[c.Source]) == 0 || p.Parts[c.Source][aggregate.PartKey(c.ID)].At.Before(since) {
			out = append(out, c)
		}
	}
	return out
}

// readSum is a fold step's document, and its sum if k knows it: k's, if
// not nil and the document exists; otherwise the document read now, and
// no sum.
func (f *Folder) readSum(ctx context.Context, id string, k *Known) (core.Parent, *Sum, error) {
	if k != nil && k.Parent.Exists {
		s := k.Sum
		return k.Parent, &s, nil
	}
	p, err := f.Read(ctx, id)
	return p, nil, err
}
