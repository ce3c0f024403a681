package fold

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/core/bytime"
	"github.com/tallycounters/tally/internal/fsrpc"
)

// The boundary job. A document folded in a bucket has, at the bucket's
// end, windows that change with no increment: a per window starts again at
// 0, an over window loses its oldest bucket. Its folds set its
// next_boundary to that end; the job, run at each start of a bucket of the
// smallest unit of the declared windows (deploy.sh schedules it, tally
// serve runs it), finds the documents whose next_boundary has passed, with
// one query, and folds each at the start B of its current bucket: its
// counts summed a microsecond before B, its windows moved to B. A document
// folded since B needs nothing. A document folded in no bucket of the
// last has no next_boundary: idle documents cost nothing.

// Due is a counted document whose windows are due to move, as the
// boundary job's query found it.
type Due struct {
	Name   string
	Parent core.Parent // as the query read it: the fold needs no read of its own
}

// Due lists the counted documents whose next_boundary is at or before
// now: each DueQueries query, which reads each of them whole, once.
func (f *Folder) Due(ctx context.Context, now time.Time) ([]Due, error) {
	var out []Due
	for _, q := range f.DueQueries(now) {
		err := fsrpc.EachDocument(ctx, q, func(snap *firestore.DocumentSnapshot) (bool, error) {
			if name, ok := f.DueName(snap.Ref); ok {
				out = append(out, Due{Name: name, Parent: core.ParentFrom(f.layout, name, snap, time.Now())})
			}
			return true, nil
		})
		if err != nil {
			return nil, fmt.Errorf("fold: documents due at a boundary: %w", err)
		}
	}
	return out, nil
}

// NextBoundaryPath is the field of a counted document that holds its
// next_boundary.
func (f *Folder) NextBoundaryPath() firestore.FieldPath {
	if f.layout.OnDocs() {
		return firestore.FieldPath{core.FieldBookkeeping, core.FieldNextBoundary}
	}
	return firestore.FieldPath{core.FieldNextBoundary}
}

// DueQueries are the queries of the counted documents whose next_boundary
// is at or before now: one per collection with windows declared (on
// documents, a collection group query, which needs the index tally
// indexes prints). DueName names what they find.
func (f *Folder) DueQueries(now time.Time) []firestore.Query {
	var queries []firestore.Query
	next := f.NextBoundaryPath()
	if !f.layout.OnDocs() {
		if len(f.layout.Windows) > 0 {
			queries = append(queries, f.client.Collection(f.layout.Collection).WherePath(next, "<=", now))
		}
		return queries
	}
	seen := map[string]bool{}
	for _, d := range f.layout.Docs {
		g := lastSegment(d)
		switch {
		case len(d.Windows) == 0 || seen[g]:
		case !strings.Contains(d.Collection, "/"):
			// A collection from the root: a query of it, on the index
			// Firestore keeps of every field.
			queries = append(queries, f.client.Collection(d.Collection).WherePath(next, "<=", now))
		case d.One():
			queries = append(queries, f.client.Collection(d.Collection[:strings.LastIndex(d.Collection, "/")]).WherePath(next, "<=", now))
		default:
			// users/*/posts: a collection group query, on the index
			// tally indexes asks for.
			seen[g] = true
			queries = append(queries, f.client.CollectionGroup(g).WherePath(next, "<=", now))
		}
	}
	return queries
}

// DueName is the counter name of a document a DueQueries query found, and
// whether it is one of the layout's counted documents.
func (f *Folder) DueName(ref *firestore.DocumentRef) (string, bool) {
	name := ref.ID
	if f.layout.OnDocs() {
		name = core.Relative(ref)
	}
	return name, f.layout.Matches(f.layout.Path(name))
}

// lastSegment is the collection id of d's documents.
func lastSegment(d core.Declaration) string {
	segs := strings.Split(d.Collection, "/")
	if d.One() {
		return segs[len(segs)-2]
	}
	return segs[len(segs)-1]
}

// FoldAtBoundary moves the windows of the counter name to the start B of
// the current bucket of its smallest unit, as of now: unless a fold at or
// after B did so already, it sums its counts a microsecond before B (and
// reads the starts of other buckets it crossed, as a fold does) and writes
// them and its windows, once the fold spacing since its last write allows.
// Wrote is false if there was nothing to do. It starts from the document
// as Due read it, and reads it again only to try again.
func (f *Folder) FoldAtBoundary(ctx context.Context, d Due, now time.Time) (Outcome, error) {
	name := d.Name
	u := f.layout.SmallestUnitOf(name)
	if u == "" {
		return Outcome{Counter: name}, nil
	}
	b := u.Start(now, f.layout.Zone)
	at := b.Add(-time.Microsecond)
	for read := false; ; read = true {
		p := d.Parent
		if read {
			var err error
			if p, err = f.Read(ctx, name); err != nil {
				return Outcome{}, err
			}
		}
		if !p.Exists || !p.AsOf.Before(at) || p.NextBoundary.IsZero() || p.NextBoundary.After(now) {
			return Outcome{Counter: name}, nil // gone, or folded since B, or not due
		}
		if time.Since(b) > bytime.Readable {
			// Run long after B (a part delivered again and again): B is
			// past what Firestore reads at a past time, and a fold now
			// reads what it can, as Rollup's would, and says which starts
			// it could not read.
			return f.Fold(ctx, name)
		}
		if waited, err := f.waitSpacing(ctx, p); err != nil {
			return Outcome{}, fmt.Errorf("fold: move the windows of %s: %w", name, err)
		} else if waited {
			continue
		}
		s, err := f.sumWhole(ctx, name, p, at)
		if err != nil {
			return Outcome{}, err
		}
		// The sum is the counts just before B: B's boundary, read.
		s.BucketStart, s.Boundaries = b, []bytime.Boundary{{At: b, Values: s.Values}}
		if err := f.Gather(ctx, name, p, &s, nil, time.Time{}, now); err != nil {
			return Outcome{}, err
		}
		fold, _, err := f.Write(ctx, name, p, s, 0)
		if errors.Is(err, ErrStale) || errors.Is(err, ErrTooSoon) {
			continue
		}
		return fold, err
	}
}
