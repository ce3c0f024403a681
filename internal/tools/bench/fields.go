package bench

import (
	"context"
	"fmt"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/fold"
	"github.com/tallycounters/tally/internal/tools/bench/report"
)

// collPosts holds tally's counters with settings.Fields: counts on
// documents, posts/{id}.f0, f1, ...
const collPosts = "posts"

// tallyLayout is the layout tally's mode runs: the guide's, or with
// settings.Fields, that many counts on each document of posts.
func tallyLayout(o settings) core.Layout {
	l := core.Default()
	if o.Aggregate {
		l.Docs = aggregateDocs
		return l
	}
	if o.Windows {
		l, err := windowsLayout(WinWindows, o.Calendar)
		if err != nil {
			panic(err) // RunWindows checked it first
		}
		return l
	}
	if o.Fields > 0 {
		l.Docs = []core.Declaration{{Collection: collPosts, Fields: fieldNames(o.Fields)}}
	}
	if o.Fields > 0 && o.Timed {
		var err error
		if l.Docs, err = core.ParseCounts(collPosts + ":" + strings.Join(fieldNames(o.Fields), ",") + "," + timedCounts(o.Fields)); err != nil {
			panic(err) // a declaration of this package's own
		}
	}
	return l
}

// timedCounts declares, for documents with n counts, what the typical
// app's posts keep by time (docs/cost.md): a day's and 7 days' windows of
// f0, its views, and a trend of every count, f0 weighing a tenth.
func timedCounts(n int) string {
	terms := append([]string{"f0/10"}, fieldNames(n)[1:]...)
	return "f0_day=f0 per day,f0_7d=f0 over 7 days,hot=trend(" + strings.Join(terms, " + ") + ", 6h)"
}

// fieldNames are the counts of a document with n counts: f0, f1, ...
func fieldNames(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("f%d", i)
	}
	return out
}

// counterIDs names a run's counters: one per document, or, with
// settings.Fields in tally's and plain's modes, one per count,
// "{doc}.f{k}", the counts of a document next to each other.
func (e *env) counterIDs(m, run string) []string {
	n := e.fieldsOf(m)
	docs := e.o.Counters
	ids := make([]string, 0, docs*max(n, 1))
	for d := range docs {
		if n == 0 {
			ids = append(ids, fmt.Sprintf("%s-%d", run, d))
			continue
		}
		for _, f := range fieldNames(n) {
			ids = append(ids, fmt.Sprintf("%s-%d.%s", run, d, f))
		}
	}
	return ids
}

// fieldsOf is how many counts each document of mode m holds: 0 for a
// counter of its own. tally's and plain's follow settings.Fields.
func (e *env) fieldsOf(m string) int {
	if m == report.ModeTally || m == report.ModePlain {
		return e.o.Fields
	}
	return 0
}

// target is where counter id of collection coll is read: its document's
// path and field.
func target(coll, id string) (doc, field string) {
	if coll == collPosts {
		d, f, _ := strings.Cut(id, ".")
		return coll + "/" + d, f
	}
	return coll + "/" + id, core.FieldTotal
}

// docOf is the index of the document that counter i of mode m counts on.
func (e *env) docOf(m string, i int) int { return i / max(e.fieldsOf(m), 1) }

// collOf is the collection of mode m's counters.
func (e *env) collOf(m string) string {
	if e.fieldsOf(m) > 0 {
		return collPosts
	}
	return collections[m]
}

// observed is the key under which the observer keeps a counter's writes:
// its document's path, and its field on documents.
func observed(coll, id string) string { return coll + "/" + id }

// foldPosts folds each document of ids (counters of coll) once, as
// tally's layout has it, 8 at a time: its windows made, as an app's posts
// have been folded before their next likes.
func (e *env) foldPosts(ctx context.Context, coll string, ids []string) error {
	folder := fold.NewFolder(e.reader, tallyLayout(e.o), e.o.Window)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	done := map[string]bool{}
	for _, id := range ids {
		doc, _ := target(coll, id)
		if done[doc] {
			continue
		}
		done[doc] = true
		g.Go(func() error {
			_, err := folder.Fold(gctx, doc)
			return err
		})
	}
	return g.Wait()
}
