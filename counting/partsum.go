package counting

import (
	"context"
	"fmt"
	"time"

	"cloud.google.com/go/firestore"
	"cloud.google.com/go/firestore/apiv1/firestorepb"
)

// Child names a child document of an aggregated source.
type Child struct {
	Source string
	ID     string
}

// SumParts refolds, at the read time at, the parts of the document at id
// that hold the given children: every part of a source of which p holds
// none. Each part is aggregated over its own range only, and split if it
// holds more than PartMax children.
func (f *Folder) SumParts(ctx context.Context, id string, p Parent, children []Child, at time.Time) ([]PartFold, error) {
	aggs := f.layout.Aggregates(id)
	type rng struct{ src, lo, hi string }
	var want []rng
	seen := map[rng]bool{}
	for _, c := range children {
		r := rng{src: c.Source}
		if key, hi, ok := p.Parts[c.Source].Of(c.ID); ok {
			r.lo, r.hi = partLo(key), hi
		}
		if !seen[r] {
			seen[r] = true
			want = append(want, r)
		}
	}
	if len(want) == 0 {
		return nil, nil
	}
	var out []PartFold
	for _, r := range want {
		pf, err := f.foldPart(ctx, id, aggs, r.src, r.lo, r.hi, Precise(at))
		if err != nil {
			return nil, fmt.Errorf("counting: aggregate the children of %s at %s: %w", id, at.Format(time.RFC3339Nano), err)
		}
		out = append(out, pf)
	}
	return out, nil
}

// AllParts names every part p holds, and the start of each source it has
// none of: what a fold from scratch refolds.
func (f *Folder) AllParts(id string, p Parent) []Child {
	var out []Child
	for _, src := range sources(f.layout.Aggregates(id)) {
		if len(p.Parts[src]) == 0 {
			out = append(out, Child{Source: src})
			continue
		}
		for _, k := range p.Parts[src].keys() {
			out = append(out, Child{Source: src, ID: partLo(k)})
		}
	}
	return out
}

// foldPart aggregates the part [lo, hi) of src, splitting it if it is too
// big.
func (f *Folder) foldPart(ctx context.Context, id string, aggs []Aggregate, src, lo, hi string, at time.Time) (PartFold, error) {
	pf := PartFold{Source: src, Lo: lo, Hi: hi, Parts: Parts{}}
	return pf, f.fill(ctx, pf.Parts, id, aggs, src, lo, hi, at, 0)
}

// maxSplits bounds how many times a fold splits a part within itself:
// ids that share a long prefix (chosen by the app) stop there, in a part
// that is bigger and exact.
const maxSplits = 4

// fill aggregates [lo, hi) into parts: as one part if it holds PartMax
// children or fewer, else split, each split filled the same way.
func (f *Folder) fill(ctx context.Context, parts Parts, id string, aggs []Aggregate, src, lo, hi string, at time.Time, depth int) error {
	part, err := f.aggregatePart(ctx, id, aggs, src, lo, hi, at)
	if err != nil {
		return err
	}
	if part.N <= PartMax || depth >= maxSplits {
		parts[PartKey(lo)] = part
		return nil
	}
	starts := splits(lo, hi, part.N)
	if len(starts) < 2 {
		parts[PartKey(lo)] = part
		return nil
	}
	for i, s := range starts {
		end := hi
		if i+1 < len(starts) {
			end = starts[i+1]
		}
		if err := f.fill(ctx, parts, id, aggs, src, s, end, at, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// aggregatePart runs the aggregations of src's aggregates over the
// children in [lo, hi) at the read time at, in a read-only transaction of
// its own (one per part, so that none outlives its limits however many
// parts a fold splits into): a count of them all, and one more query for
// each aggregate that is not that count.
func (f *Folder) aggregatePart(ctx context.Context, id string, aggs []Aggregate, src, lo, hi string, at time.Time) (part Part, err error) {
	err = f.client.RunTransaction(ctx, func(ctx context.Context, tx *firestore.Transaction) error {
		part, err = f.aggregatePartIn(ctx, tx, id, aggs, src, lo, hi, at)
		return err
	}, firestore.ReadOnly, firestore.TransactionReadTime(at))
	return part, err
}

// aggregatePartIn is aggregatePart in the transaction tx.
func (f *Folder) aggregatePartIn(ctx context.Context, tx *firestore.Transaction, id string, aggs []Aggregate, src, lo, hi string, at time.Time) (Part, error) {
	coll := f.source(id, src)
	q := coll.Query
	if lo != "" {
		q = q.Where(firestore.DocumentID, ">=", coll.Doc(lo))
	}
	if hi != "" {
		q = q.Where(firestore.DocumentID, "<", coll.Doc(hi))
	}
	part := Part{At: at, V: map[string]any{}, C: map[string]int64{}}
	res, err := q.NewAggregationQuery().WithCount("n").Transaction(tx).Get(ctx)
	if err != nil {
		return part, err
	}
	part.N = value(res["n"]).(int64)
	for _, a := range aggs {
		if a.Source() != src {
			continue
		}
		switch {
		case a.Op == OpCount && len(a.Where) == 0:
			part.V[a.Field] = part.N
		case a.Op == OpCount:
			fq := q
			for _, w := range a.Where {
				fq = fq.Where(w.Field, "==", w.Value)
			}
			if res, err = fq.NewAggregationQuery().WithCount("n").Transaction(tx).Get(ctx); err != nil {
				return part, err
			}
			part.V[a.Field] = value(res["n"])
		case a.Op == OpSum:
			if res, err = q.NewAggregationQuery().WithSum(a.Of, "s").Transaction(tx).Get(ctx); err != nil {
				return part, err
			}
			part.V[a.Field] = value(res["s"])
		case a.Op == OpAvg:
			numeric := q.Where(a.Of, ">=", negInf)
			if res, err = numeric.NewAggregationQuery().WithSum(a.Of, "s").WithCount("n").Transaction(tx).Get(ctx); err != nil {
				return part, err
			}
			part.V[a.Field], part.C[a.Field] = value(res["s"]), value(res["n"]).(int64)
		}
	}
	return part, nil
}

// source is the collection of src's children of the document at id.
func (f *Folder) source(id, src string) *firestore.CollectionRef {
	if src[0] == '/' {
		return f.client.Collection(src[1:])
	}
	return f.layout.Counter(f.client, id).Collection(src)
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
