package doctor

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// fold checks that a shard write reaches Rollup and is folded: it counts
// 1 on a counter of its own, as Increment does, and waits, up to
// FoldWithin, for the count to hold it; then removes the counter.
func fold(ctx context.Context, o Options, run string) (Verdict, string) {
	id, field := o.ownCounter(run)
	if id == "" {
		return Skip, "no collection of counted documents to make one of the check's own in"
	}
	defer o.removeCounter(id)
	if o.Layout.OnDocs() {
		if _, err := o.Client.Doc(id).Create(ctx, map[string]any{"title": "tally doctor: removed when its check ends"}); err != nil {
			return Fail, fmt.Sprintf("could not make %s, the check's own: %v", id, err)
		}
	} else if err := o.Admin.Create(ctx, id, 1); err != nil {
		return Fail, fmt.Sprintf("could not make the counter %s, the check's own: %v", id, err)
	}
	began := time.Now()
	committed, err := o.Admin.AddCommitted(ctx, id, field, 1)
	if err != nil {
		return Fail, fmt.Sprintf("an increment of %s, as Increment writes it: %v", id, err)
	}
	wctx, cancel := context.WithTimeout(ctx, o.FoldWithin)
	defer cancel()
	for {
		n, err := o.Admin.Get(wctx, id, field)
		if err == nil && n == 1 {
			return OK, fmt.Sprintf("a shard write of %s was folded into it %v after it committed (%s): its event reached Rollup",
				id, time.Since(began).Round(time.Millisecond), committed.Format(time.RFC3339Nano))
		}
		select {
		case <-wctx.Done():
			return Fail, fmt.Sprintf("a shard write of %s was not folded within %v: is Rollup deployed, with its trigger on the shards "+
				"(deploy.sh; tally config --triggers), and does it log folds (its logs: \"rollup: fold\")?", id, o.FoldWithin)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// ownCounter is the counter of the check's own, and its count field: in
// the guide layout, counters/tally-doctor-{run}; on documents, a
// document of the first collection counted, '*' ids tally-doctor.
func (o Options) ownCounter(run string) (id, field string) {
	if !o.Layout.OnDocs() {
		return "tally-doctor-" + run, ""
	}
	for _, d := range o.Layout.Docs {
		if len(d.Fields) == 0 || d.One() {
			continue
		}
		id = strings.ReplaceAll(d.Collection, "*", "tally-doctor") + "/tally-doctor-" + run
		return id, d.Fields[0]
	}
	return "", ""
}

// removeCounter removes the check's own counter: its shards and
// bookkeeping, and on documents the document itself.
func (o Options) removeCounter(id string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	o.Admin.Delete(ctx, id)
	if o.Layout.OnDocs() {
		o.Admin.DeleteDocument(ctx, id)
		o.Client.Doc(id).Delete(ctx)
	}
}
