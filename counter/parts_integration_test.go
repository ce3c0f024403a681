package counter_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/tallycounters/tally/counter"
	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/testkit/layouttest"
)

// dueDocs makes n documents whose windows are due (emulatortest.DueDocs),
// and a client of their layout.
func dueDocs(t *testing.T, n int, step time.Duration) (*counter.Client, []string) {
	fs := emulatortest.Client(t)
	l, names := emulatortest.DueDocs(t, fs, n, step)
	return counter.New(fs, counter.Options{Layout: layouttest.Public(l), Spacing: window}), names
}

// TestSplitListsEachDueDocumentOnce: the boundary job's listing hands on
// every document due once, in parts of at most the part size, numbered
// from 1; stopped at its deadline after each document, the parts that go
// on with it list the rest, each once. Each part's documents move once:
// run again (a message delivered twice), a part moves nothing, and none
// is due after.
func TestSplitListsEachDueDocumentOnce(t *testing.T) {
	t.Parallel()
	c, names := dueDocs(t, 25, 5*time.Second)
	ctx := context.Background()
	at := time.Now()
	var parts []counter.Part
	rep, err := c.Split(ctx, counter.Part{Job: counter.JobWindows, At: at, Seq: 1}, 10, time.Time{}, func(p counter.Part) error {
		parts = append(parts, p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var sizes []int
	var listed []string
	for i, p := range parts {
		sizes = append(sizes, len(p.Names))
		listed = append(listed, p.Names...)
		if p.Seq != i+1 || p.After != nil || !p.At.Equal(at) {
			t.Errorf("part %d: seq %d, after %v, at %v", i, p.Seq, p.After, p.At)
		}
	}
	slices.Sort(listed)
	if rep.Due != 25 || rep.Parts != 3 || rep.More || !slices.Equal(sizes, []int{10, 10, 5}) || !slices.Equal(listed, names) {
		t.Fatalf("split %+v into parts of %v: %v; want 25 due in parts of 10, 10, 5: %v", rep, sizes, listed, names)
	}

	// A listing out of time after each document: one document a part,
	// and a part that goes on.
	once, _ := listOutOfTime(t, c, counter.Part{Job: counter.JobWindows, At: at, Seq: 1}, 10, 2*len(names))
	slices.Sort(once)
	if !slices.Equal(once, names) {
		t.Fatalf("listed on from cursors: %v; want each of %v once", once, names)
	}

	moved := 0
	for _, p := range parts {
		r, err := c.RunPart(ctx, p, func(name string, err error) { t.Errorf("%s: %v", name, err) })
		if err != nil {
			t.Fatal(err)
		}
		moved += r.Moved
	}
	if moved != 25 {
		t.Errorf("the parts moved %d documents, want 25", moved)
	}
	for _, p := range parts {
		if r, err := c.RunPart(ctx, p, nil); err != nil || r.Moved != 0 || r.Failed != 0 {
			t.Errorf("part %d run again: %+v, %v; want nothing moved", p.Seq, r, err)
		}
	}
	rep, err = c.Split(ctx, counter.Part{Job: counter.JobWindows, At: at, Seq: 1}, 10, time.Time{}, func(counter.Part) error { return nil })
	if err != nil || rep.Due != 0 {
		t.Errorf("after the parts: %+v, %v; want none due", rep, err)
	}
}

// TestPartsThatAreNone: a part of no job, without a time, with neither
// names nor a listing, or with a name of no counted document, is refused
// before anything is read or written.
func TestPartsThatAreNone(t *testing.T) {
	t.Parallel()
	fs := emulatortest.Client(t)
	layout := core.Default()
	var err error
	if layout.Docs, err = core.ParseCounts("posts:views"); err != nil {
		t.Fatal(err)
	}
	c := counter.New(fs, counter.Options{Layout: layouttest.Public(layout)})
	at := time.Now()
	for _, p := range []counter.Part{
		{Job: "purge", At: at, Names: []string{"posts/a"}},
		{Job: counter.JobWindows, Names: []string{"posts/a"}},
		{Job: counter.JobWindows, At: at},
		{Job: counter.JobWindows, At: at, Names: []string{"posts/a"}, After: &counter.Cursor{}},
		{Job: counter.JobReconcile, At: at, Names: []string{"users/a"}},
		{Job: counter.JobReconcile, At: at, Names: []string{"posts/a/b"}},
	} {
		if err := c.CheckPart(p); err == nil {
			t.Errorf("part %+v taken", p)
		}
		if _, err := c.RunPart(context.Background(), p, nil); err == nil {
			t.Errorf("part %+v run", p)
		}
	}
}

// TestReconcileListingGoesOn: Reconcile's listing, stopped at its deadline
// (at the end of each page of the collection of counters, after each
// counted document), goes on from where it stopped, and lists each
// counter once: of the guide layout (those whose parent is only their
// shards' too), and of counts on documents.
func TestReconcileListingGoesOn(t *testing.T) {
	t.Parallel()
	fs := emulatortest.Client(t)
	ctx := context.Background()
	guide := core.Default()
	guide.Collection = "c" + emulatortest.ID(t)
	var want []string
	for i := range 23 {
		id := fmt.Sprintf("k%02d", i)
		want = append(want, id)
		if i%5 == 0 { // shards only, as Google's samples make them
			if _, err := guide.Shard(fs, id, "", 0).Set(ctx, map[string]any{guide.ShardField: 1}); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if _, err := guide.Counter(fs, id).Set(ctx, map[string]any{core.FieldNumShards: 1}); err != nil {
			t.Fatal(err)
		}
	}
	docs := core.Default()
	coll := "d" + emulatortest.ID(t)
	var err error
	if docs.Docs, err = core.ParseCounts(coll + ":likes"); err != nil {
		t.Fatal(err)
	}
	var wantDocs []string
	for i := range 7 {
		name := fmt.Sprintf("%s/p%d", coll, i)
		wantDocs = append(wantDocs, name)
		if _, err := fs.Doc(name).Create(ctx, map[string]any{"title": "a post"}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		layout core.Layout
		want   []string
	}{{guide, want}, {docs, wantDocs}} {
		c := counter.New(fs, counter.Options{Layout: layouttest.Public(tc.layout)})
		counter.ListPage(c, 5)
		listed, steps := listOutOfTime(t, c, counter.Part{Job: counter.JobReconcile, At: time.Now(), Seq: 1}, 3, 30)
		if steps < 2 {
			t.Errorf("the listing of %v went on only %d times", tc.want, steps)
		}
		slices.Sort(listed)
		if !slices.Equal(listed, tc.want) {
			t.Errorf("listed %v; want each of %v once", listed, tc.want)
		}
	}
}

// listOutOfTime runs the listing of first's job with its deadline passed,
// in parts of size, and each part that goes on with it, until none does
// (at most most times): it returns the names listed, in the order listed,
// and how many times the listing went on.
func listOutOfTime(t *testing.T, c *counter.Client, first counter.Part, size, most int) ([]string, int) {
	t.Helper()
	var listed []string
	next := first
	for steps := 0; ; steps++ {
		if steps > most {
			t.Fatalf("the listing did not end: %v", listed)
		}
		var goOn *counter.Part
		_, err := c.Split(context.Background(), next, size, time.Now().Add(-time.Second), func(p counter.Part) error {
			if p.After != nil {
				goOn = &p
			}
			listed = append(listed, p.Names...)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if goOn == nil {
			return listed, steps
		}
		next = *goOn
	}
}
