package doctor

import (
	"context"
	"fmt"
	"time"

	"cloud.google.com/go/firestore"
	"cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/fsrpc"
)

// verify checks that a commit that verifies a document it does not write
// is taken while the document exists, and refused whole, NOT_FOUND, once
// it does not: what each increment of tally's on documents relies on.
func verify(ctx context.Context, o Options, run string) (Verdict, string) {
	doc := o.Client.Collection(Collection).Doc(run + "-verify")
	defer remove(o, doc)
	if _, err := doc.Create(ctx, map[string]any{"by": "tally doctor", "at": firestore.ServerTimestamp}); err != nil {
		return Fail, fmt.Sprintf("could not write %s, the check's own: %v", core.Relative(doc), err)
	}
	taken, refused := doc.Collection("checks").Doc("taken"), doc.Collection("checks").Doc("refused")
	if _, err := taken.Set(fsrpc.WithVerify(ctx, doc.Path), map[string]any{"n": 1}); err != nil {
		return Fail, fmt.Sprintf("a commit verifying %s, which exists, was refused: %v; tally's increments on documents verify theirs", core.Relative(doc), err)
	}
	gone := o.Client.Collection(Collection).Doc(run + "-none")
	_, err := refused.Set(fsrpc.WithVerify(ctx, gone.Path), map[string]any{"n": 1})
	if status.Code(err) != codes.NotFound {
		return Fail, fmt.Sprintf("a commit verifying %s, which does not exist, answered %v, not NOT_FOUND: the verify is not enforced, and an increment "+
			"of a deleted document would be answered 200 and counted nowhere", core.Relative(gone), err)
	}
	if snap, err := refused.Get(ctx); err == nil && snap.Exists() {
		return Fail, "a commit whose verify failed was applied"
	}
	return OK, "a commit that verifies a document it does not write is taken, and refused whole once the document is gone; " +
		"Firestore bills each verify as a read (\"Writes that only verify the existence or non-existence of a document contribute to billed read operations\")"
}

// aggregation checks that an aggregation answers its read time, and that
// one at a past read time counts what was there then: each fold's sum.
func aggregation(ctx context.Context, o Options, run string) (Verdict, string) {
	doc := o.Client.Collection(Collection).Doc(run + "-aggregation")
	defer remove(o, doc)
	items := doc.Collection("checks")
	first, err := items.Doc("a").Create(ctx, map[string]any{"n": int64(1)})
	if err != nil {
		return Fail, fmt.Sprintf("could not write the check's own documents under %s: %v", core.Relative(doc), err)
	}
	if _, err := items.Doc("b").Create(ctx, map[string]any{"n": int64(1)}); err != nil {
		return Fail, err.Error()
	}
	rctx, readTime := fsrpc.WithReadTime(ctx)
	res, err := items.NewAggregationQuery().WithSum("n", "sum").Get(rctx)
	if err != nil {
		return Fail, fmt.Sprintf("sum() of the check's documents: %v", err)
	}
	if readTime().IsZero() || sumOf(res) != 2 {
		return Fail, fmt.Sprintf("sum() answered %v at read time %v; want 2, and its read time", res["sum"], readTime())
	}
	var then int64
	err = o.Client.RunTransaction(ctx, func(ctx context.Context, tx *firestore.Transaction) error {
		r, err := items.NewAggregationQuery().WithSum("n", "sum").Transaction(tx).Get(ctx)
		then = sumOf(r)
		return err
	}, firestore.ReadOnly, firestore.TransactionReadTime(first.UpdateTime))
	if err != nil || then != 1 {
		return Fail, fmt.Sprintf("sum() at a past read time answered %d (%v); want 1, what was there then", then, err)
	}
	return OK, fmt.Sprintf("sum() answers its read time (%s), and at a past read time counts what was there then", readTime().Format(time.RFC3339Nano))
}

// sumOf reads a sum() result.
func sumOf(res firestore.AggregationResult) int64 {
	v, ok := res["sum"].(*firestorepb.Value)
	if !ok {
		return -1
	}
	return v.GetIntegerValue()
}

// remove deletes doc and what the checks wrote under it.
func remove(o Options, doc *firestore.DocumentRef) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if refs, err := doc.Collection("checks").DocumentRefs(ctx).GetAll(); err == nil {
		for _, r := range refs {
			r.Delete(ctx)
		}
	}
	doc.Delete(ctx)
}
