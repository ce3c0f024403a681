package extension

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"cloud.google.com/go/firestore"
	"golang.org/x/sync/errgroup"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tallycounters/tally/internal/core"
)

// TakeoverOptions configure Takeover. Zero fields take the defaults.
type TakeoverOptions struct {
	// Counters are the documents and fields the extension's clients count
	// (TALLY_EXTENSION_COUNTERS): the shards of any other document are
	// left, and reported.
	Counters Counters
	// Quiet holds the shards a client wrote within it (MoverOptions):
	// DefaultQuiet beside clients that still count; 0 for none.
	Quiet  time.Duration
	DryRun bool // report what would be moved and removed; write nothing
	// StatePaths are the documents the extension kept its workers' state
	// in (its INTERNAL_STATE_PATH); default DefaultStatePath.
	StatePaths []string
	Parallel   int          // documents moved at once; default 16
	Progress   func(string) // if set, hears a line for a person now and then
	// KeepState leaves the workers' state as it is: for a sweep beside an
	// extension that still runs (the scheduled Reconcile's).
	KeepState bool
}

// Report is what Takeover found, and moved or removed.
type Report struct {
	Documents int // documents with shards or partials
	Counters  int // counters found: fields of a document its shards or partials hold
	Shards    int // shards found (moved, but for those in Left)
	Partials  int // partials found (moved, but for those in Left)
	// Totals are the amounts the shards and partials held, by field path
	// (dotted), that Takeover moved (or, with DryRun, would move).
	Totals Amounts
	// Left are the shards and partials left alone, by path, with why:
	// under a document no declaration holds, holding what is not a
	// declared count, or what their document cannot take.
	Left map[string]error
	// Held are the client shards left for later because their client
	// wrote them within the quiet time: a run again, or Rollup, moves
	// them.
	Held int
	// Gone are the documents of counted collections whose shards were
	// left because the document does not exist (tally never creates one).
	Gone []string
	// Failed are the documents no move could be made into, with why: a
	// run again moves them.
	Failed map[string]error
	// State are the documents of the workers' state found (and removed,
	// but with DryRun).
	State []string
}

// scanPage is how many shards one page of Takeover's scan reads.
const scanPage = 1000

// Takeover moves the shards and partials of every declared document in
// client's database into the document's fields, as Rollup's moves do
// (Move, whatever the spacing), and removes the extension's workers'
// state: for an app that uninstalled the extension, whose shards no
// worker moves any more. It may run beside Rollup and a running
// extension: every move is a transaction. A second run finds nothing
// more to move. A dry run reports what each move would take and leave
// (Plan), and writes nothing.
func Takeover(ctx context.Context, client *firestore.Client, layout core.Layout, o TakeoverOptions) (Report, error) {
	r := Report{Totals: Amounts{}, Left: map[string]error{}, Failed: map[string]error{}}
	if len(o.Counters) == 0 {
		return r, fmt.Errorf("extension: takeover: declare the extension's counters (TALLY_EXTENSION_COUNTERS, such as pages:likes,stats.views)")
	}
	docs, err := scan(ctx, client, &r, o)
	if err != nil {
		return r, err
	}
	m := NewMover(client, layout, MoverOptions{Counters: o.Counters, Quiet: o.Quiet, TakeZeros: true})
	if err := moveAll(ctx, m, docs, &r, o); err != nil {
		return r, err
	}
	if o.KeepState {
		return r, nil
	}
	return r, removeState(ctx, client, &r, o)
}

// scan reads every shard and partial, and lists the documents they are
// of, in order: those the declarations hold; the others' shards are
// left, and reported.
func scan(ctx context.Context, client *firestore.Client, r *Report, o TakeoverOptions) ([]string, error) {
	var docs []string
	q := client.CollectionGroup(Collection).OrderBy(firestore.DocumentID, firestore.Asc).Limit(scanPage)
	for page := q; ; {
		snaps, err := page.Documents(ctx).GetAll()
		if err != nil {
			return docs, fmt.Errorf("extension: scan the shards: %w", err)
		}
		for _, s := range snaps {
			doc, _, ok := Owner(core.Relative(s.Ref))
			if !ok {
				continue // a subcollection of that name in another shape
			}
			if _, declared := o.Counters.Of(doc); !declared {
				r.Left[core.Relative(s.Ref)] = fmt.Errorf("%s is no document TALLY_EXTENSION_COUNTERS declares (%s)", doc, o.Counters)
				continue
			}
			if len(docs) == 0 || docs[len(docs)-1] != doc {
				docs = append(docs, doc)
			}
		}
		if len(snaps) < scanPage {
			break
		}
		page = q.StartAfter(snaps[len(snaps)-1])
		progress(o, "found the shards and partials of %d documents", len(docs))
	}
	r.Documents = len(docs)
	return docs, nil
}

// moveAll moves the shards and partials of docs (with DryRun, plans
// their moves), o.Parallel at a time. A document whose move keeps failing
// (contention, or an error of Firestore's) is reported in r.Failed, and
// the others are moved.
func moveAll(ctx context.Context, m *Mover, docs []string, r *Report, o TakeoverOptions) error {
	var g errgroup.Group
	g.SetLimit(cmp.Or(max(o.Parallel, 0), 16))
	var mu sync.Mutex
	done := 0
	counters := map[[2]string]bool{} // document, field
	for _, doc := range docs {
		g.Go(func() error {
			out, err := moveWhole(ctx, m, doc, o.DryRun)
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				err = merge(r, doc, out)
			}
			if err != nil {
				r.Failed[doc] = err
			}
			for _, p := range out.Moved.Paths() {
				counters[[2]string{doc, strings.Join(p, ".")}] = true
			}
			if done++; done%1000 == 0 {
				progress(o, "moved the shards of %d of %d documents", done, len(docs))
			}
			return nil
		})
	}
	g.Wait()
	r.Counters = len(counters)
	return ctx.Err()
}

// moveWhole moves every shard and partial of doc, one move after another
// while more are left, trying a move that failed again a few times; with
// dry, it plans the first move only.
func moveWhole(ctx context.Context, m *Mover, doc string, dry bool) (Outcome, error) {
	if dry {
		return m.Plan(ctx, doc)
	}
	all := Outcome{Doc: doc, Moved: Amounts{}, Left: map[string]error{}, Held: map[string]time.Time{}}
	for tries, backoff := 0, 50*time.Millisecond; ; backoff *= 2 {
		out, err := m.Move(ctx, doc, time.Time{}) // whatever moves covered already
		if err != nil {
			if tries++; tries == 5 {
				return all, err
			}
			select {
			case <-ctx.Done():
				return all, err
			case <-time.After(backoff):
			}
			continue
		}
		all.Shards, all.Partials, all.Gone = all.Shards+out.Shards, all.Partials+out.Partials, out.Gone
		maps.Copy(all.Left, out.Left)
		maps.Copy(all.Held, out.Held)
		if err := all.Moved.Add(out.Moved); err != nil || !out.More {
			return all, err
		}
	}
}

// merge adds what a move of doc did to r.
func merge(r *Report, doc string, out Outcome) error {
	if out.Gone {
		r.Gone = append(r.Gone, doc)
		return nil
	}
	r.Shards += out.Shards
	r.Partials += out.Partials
	r.Held += len(out.Held)
	for id, why := range out.Left {
		r.Left[doc+"/"+Collection+"/"+id] = why
	}
	return r.Totals.Add(out.Moved)
}

// removeState removes (with DryRun, finds) the documents of the
// extension's workers' state: each state document and its workers.
func removeState(ctx context.Context, client *firestore.Client, r *Report, o TakeoverOptions) error {
	paths := o.StatePaths
	if len(paths) == 0 {
		paths = []string{DefaultStatePath}
	}
	for _, p := range paths {
		ref := client.Doc(p)
		if ref == nil {
			return fmt.Errorf("extension: the state path %q is not a document's", p)
		}
		refs, err := ref.Collection(workersCollection).DocumentRefs(ctx).GetAll()
		if err != nil {
			return fmt.Errorf("extension: list the workers of %s: %w", p, err)
		}
		if _, err := ref.Get(ctx); err == nil {
			refs = append(refs, ref)
		} else if status.Code(err) != codes.NotFound {
			return fmt.Errorf("extension: read %s: %w", p, err)
		}
		for _, w := range refs {
			r.State = append(r.State, core.Relative(w))
			if o.DryRun {
				continue
			}
			if _, err := w.Delete(ctx); err != nil {
				return fmt.Errorf("extension: remove %s: %w", core.Relative(w), err)
			}
		}
	}
	slices.Sort(r.State)
	return nil
}

func progress(o TakeoverOptions, format string, args ...any) {
	if o.Progress != nil {
		o.Progress(fmt.Sprintf(format, args...))
	}
}
