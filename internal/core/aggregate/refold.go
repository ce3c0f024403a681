package aggregate

import (
	"cmp"
	"context"
	"errors"
	"maps"
	"slices"
	"sync"
	"time"

	"cloud.google.com/go/firestore"
	"cloud.google.com/go/firestore/apiv1/firestorepb"

	"github.com/tallycounters/tally/internal/fsrpc"
)

// Child names a child document of an aggregated source, and when it was
// written (its event's time), or, in what a fold says of it, the read
// time of the value the document's aggregates hold of it.
type Child struct {
	Source string
	ID     string
	At     time.Time
	// Whole asks for the whole part that holds ID refolded from its
	// children (a reconcile), not only ID.
	Whole bool
}

// Failure is an aggregate that a fold could not aggregate for a reason no
// retry fixes (a query Firestore refuses, such as one that needs an index
// it lacks): its value stays as it was, and the fold writes the rest.
type Failure struct {
	Field string
	Err   error
}

// Doc is a counted document as a fold of its aggregates sees it: the
// aggregates declared on it, its parts as it holds them, where the
// children of each source and its part documents are (in the life it is
// in), and the client that reads and writes them.
type Doc struct {
	Client   *firestore.Client
	Aggs     []Aggregate
	Parts    map[string]Parts
	Children func(src string) *firestore.CollectionRef
	PartDoc  func(src, lo string) *firestore.DocumentRef
}

// ErrStale ends the refold of a part whose document another fold wrote
// since it was read: the next fold goes on from it.
var ErrStale = errors.New("a part's document changed since it was read")

// Refold refolds, at the read time at, the parts of d that hold the given
// children: every part of a source of which d holds none, and every part
// that holds no value of an aggregate declared since it was folded
// (lacking), whole. Each part is
// aggregated over its own range only, and split if it holds more than
// PartMax children. A part of a source that a sum or an average is
// declared over (a valued source) keeps its children's records, and
// reads the children asked for (valued.go); its document is written as
// soon as the part is refolded, so that it stays refolded whatever comes
// after.
//
// The work is bounded: the parts are refolded partWorkers at a time, in
// the order their children are given, and no part is begun once a step
// (PartStep), or half of ctx's time, is spent (the first always is), so
// that the fold writes what was done soon and with time to spare; a part
// that fails, once one is done, is left out. The parts not reached are the
// next fold's. A part whose document another fold wrote meanwhile is left
// out too: the next fold goes on from it.
func (d Doc) Refold(ctx context.Context, children []Child, at time.Time) ([]PartFold, error) {
	at = at.Truncate(time.Microsecond)
	aggs := d.Aggs
	var want []partRange
	asked := map[partRange][]Child{}
	whole := map[partRange]bool{}
	for _, c := range children {
		r := partRange{src: c.Source}
		if key, hi, ok := d.Parts[c.Source].Of(c.ID); ok {
			r.lo, r.hi = PartLo(key), hi
		}
		if _, seen := asked[r]; !seen {
			want = append(want, r)
			asked[r] = nil
		}
		if c.Whole {
			whole[r] = true
		} else {
			asked[r] = append(asked[r], c)
		}
	}
	for _, r := range d.lacking() {
		if _, seen := asked[r]; !seen {
			want = append(want, r)
			asked[r] = nil
		}
		whole[r] = true
	}
	fold := func(r partRange) (PartFold, error) {
		if !Valued(aggs, r.src) {
			return d.foldPart(ctx, aggs, r.src, r.lo, r.hi, d.Parts[r.src], at)
		}
		var old *Part
		if part, ok := d.Parts[r.src][PartKey(r.lo)]; ok {
			old = &part
		}
		pf, err := d.foldValued(ctx, aggs, r.src, r.lo, r.hi, old, asked[r], whole[r], at)
		if err == nil {
			err = d.writePartDocs(ctx, pf.docs)
			pf.docs = nil
		}
		return pf, err
	}
	stopAt := halfway(ctx)
	if step := time.Now().Add(PartStep); step.Before(stopAt) {
		stopAt = step
	}
	results := make([]partResult, len(want))
	free := make(chan struct{}, partWorkers)
	var wg sync.WaitGroup
	for i := range want {
		free <- struct{}{} // a worker is free: begin the next part, if the step allows
		if i > 0 && time.Now().After(stopAt) {
			break // the rest is the next fold's
		}
		wg.Go(func() {
			defer func() { <-free }()
			results[i].pf, results[i].err = fold(want[i])
			results[i].done = true
		})
	}
	wg.Wait()
	var out []PartFold
	var first error
	for _, r := range results {
		switch {
		case !r.done, errors.Is(r.err, ErrStale):
			// not begun, or another fold wrote the part meanwhile: the
			// next fold goes on from it
		case r.err != nil:
			first = cmp.Or(first, r.err)
		default:
			out = append(out, r.pf)
		}
	}
	if len(out) == 0 && first != nil {
		return nil, first
	}
	return out, nil
}

// PartStep bounds the time a fold spends refolding parts before it
// writes them: a step, so that a document of many parts busy all over
// shows its changes a step at a time.
const PartStep = 2 * time.Second

// partWorkers is how many parts a fold refolds at once: each in a
// transaction of its own.
const partWorkers = 8

// partRange is a part of a source to refold, [lo, hi).
type partRange struct{ src, lo, hi string }

// partResult is what the refold of one part came to.
type partResult struct {
	pf   PartFold
	err  error
	done bool
}

// halfway is when half of ctx's time is spent from now; far off if ctx
// has no deadline.
func halfway(ctx context.Context) time.Time {
	now := time.Now()
	if dl, ok := ctx.Deadline(); ok {
		return now.Add(dl.Sub(now) / 2)
	}
	return now.Add(365 * 24 * time.Hour)
}

// foldPart aggregates the part [lo, hi) of a source with counts only,
// splitting it if it is too big; old are the source's parts as the
// document holds them.
func (d Doc) foldPart(ctx context.Context, aggs []Aggregate, src, lo, hi string, old Parts, at time.Time) (PartFold, error) {
	pf := PartFold{Source: src, Lo: lo, Hi: hi, Parts: Parts{}}
	var prev *Part
	if part, ok := old[PartKey(lo)]; ok {
		prev = &part
	}
	return pf, d.fill(ctx, &pf, aggs, lo, hi, at, prev, 0)
}

// maxSplits bounds how many times a fold splits a part within itself:
// ids that share a long prefix (chosen by the app) stop there, in a part
// that is bigger and exact.
const maxSplits = 4

// fill aggregates [lo, hi) into pf's parts: as one part if it holds
// PartMax children or fewer, else split, each split filled the same way.
func (d Doc) fill(ctx context.Context, pf *PartFold, aggs []Aggregate, lo, hi string, at time.Time, old *Part, depth int) error {
	var part Part
	err := d.Client.RunTransaction(ctx, func(ctx context.Context, tx *firestore.Transaction) error {
		var err error
		part, err = d.countRange(ctx, tx, pf, aggs, pf.Source, lo, hi, at, old)
		return err
	}, firestore.ReadOnly, firestore.TransactionReadTime(at))
	if err != nil {
		return err
	}
	if part.N <= PartMax || depth >= maxSplits {
		pf.Parts[PartKey(lo)] = part
		return nil
	}
	starts := splits(lo, hi, part.N)
	if len(starts) < 2 {
		pf.Parts[PartKey(lo)] = part
		return nil
	}
	for i, s := range starts {
		end := hi
		if i+1 < len(starts) {
			end = starts[i+1]
		}
		if err := d.fill(ctx, pf, aggs, s, end, at, nil, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// countRange runs the counts of src's aggregates over the children in
// [lo, hi) at the read time at, in tx (one per part, so that none
// outlives its limits however many parts a fold splits into): a count of
// them all, and one more query for each count with filters. A filtered
// count that Firestore refuses for good keeps old's value (none without
// old), and is reported in pf.Failed; any other failure is returned.
func (d Doc) countRange(ctx context.Context, tx *firestore.Transaction, pf *PartFold, aggs []Aggregate, src, lo, hi string, at time.Time, old *Part) (Part, error) {
	q := rangeOf(d.Children(src), lo, hi)
	part := Part{At: at, V: map[string]any{}, C: map[string]int64{}}
	res, err := q.NewAggregationQuery().WithCount("n").Transaction(tx).Get(ctx)
	if err != nil {
		return part, err
	}
	part.N = value(res["n"]).(int64)
	for _, a := range aggs {
		switch {
		case a.Source() != src || a.Op != OpCount:
		case len(a.Where) == 0:
			part.V[a.Field] = part.N
		default:
			fq := q
			for _, w := range a.Where {
				fq = fq.Where(w.Field, "==", w.Value)
			}
			res, err := fq.NewAggregationQuery().WithCount("n").Transaction(tx).Get(ctx)
			switch {
			case err == nil:
				part.V[a.Field] = value(res["n"])
			case fsrpc.Permanent(err):
				pf.Failed = append(pf.Failed, Failure{Field: a.Field, Err: err})
				if old != nil {
					if v, ok := old.V[a.Field]; ok {
						part.V[a.Field] = v
					}
				}
			default:
				return part, err
			}
		}
	}
	return part, nil
}

// value is an aggregation result as an int64 or a float64 (0 if absent).
func value(v any) any {
	pv, _ := v.(*firestorepb.Value)
	switch x := pv.GetValueType().(type) {
	case *firestorepb.Value_DoubleValue:
		return x.DoubleValue
	case *firestorepb.Value_IntegerValue:
		return x.IntegerValue
	}
	return int64(0)
}

// lacking are the parts of d that hold no value of an aggregate declared
// on their source since they were folded, in the order of their sources
// and ranges: an aggregate is over every part, so a declaration added
// beside others refolds each part once, at its document's next fold of
// a child, in bounded steps as any refold. A filtered count is not
// looked for: one whose query Firestore refuses (an index missing) holds
// no value for good, and would refold its parts at every fold.
func (d Doc) lacking() []partRange {
	var out []partRange
	for _, src := range slices.Sorted(maps.Keys(d.Parts)) {
		parts := d.Parts[src]
		keys := parts.Keys()
		for i, key := range keys {
			part := parts[key]
			missing := slices.ContainsFunc(d.Aggs, func(a Aggregate) bool {
				if a.Source() != src || a.Op == OpCount && len(a.Where) > 0 {
					return false
				}
				_, v := part.V[a.Field]
				_, c := part.C[a.Field]
				return !v && !c
			})
			if missing {
				r := partRange{src: src, lo: PartLo(key)}
				if i+1 < len(keys) {
					r.hi = PartLo(keys[i+1])
				}
				out = append(out, r)
			}
		}
	}
	return out
}
