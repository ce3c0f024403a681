package counter_test

import (
	"context"
	"testing"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/counter"
	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/testkit/layouttest"
)

// TestWindowNewToADocument: a per-minute window declared on a post that
// was created, and counted, in an earlier minute starts exact at its first
// fold: the fold reads the count at its bucket's start, so the window
// holds only the views since, as their commit times say; and a post
// created in the current minute needs no such read.
func TestWindowNewToADocument(t *testing.T) {
	t.Parallel()
	fs, ops := emulatortest.CountingClient(t)
	ctx := context.Background()
	coll := "newwin" + emulatortest.ID(t)
	plain, windowed := core.Default(), core.Default()
	var err error
	if plain.Docs, err = core.ParseCounts(coll + ":views"); err != nil {
		t.Fatal(err)
	}
	if windowed.Docs, err = core.ParseCounts(coll + ":views,views_m=views per minute"); err != nil {
		t.Fatal(err)
	}
	before := counter.New(fs, counter.Options{Layout: layouttest.Public(plain), Spacing: window})
	after := counter.New(fs, counter.Options{Layout: layouttest.Public(windowed), Spacing: window})
	old, unfolded := coll+"/old", coll+"/unfolded"
	for _, p := range []string{old, unfolded} {
		if _, err := fs.Doc(p).Create(ctx, map[string]any{"title": "an old post"}); err != nil {
			t.Fatal(err)
		}
	}
	commits := map[string][]time.Time{} // each post's views
	view := func(c *counter.Client, id string) {
		t.Helper()
		at, err := c.AddCommitted(ctx, id, "views", 1)
		if err != nil {
			t.Fatal(err)
		}
		commits[id] = append(commits[id], at)
	}
	// since checks that the window of the post holds the views committed
	// since its bucket began.
	since := func(id string) {
		t.Helper()
		snap, err := fs.Doc(id).Get(ctx)
		if err != nil {
			t.Fatal(err)
		}
		cur := core.StateOf(windowed, snap.Data(), "views_m").Bucket
		var want int64
		for _, c := range commits[id] {
			if !c.Before(cur) {
				want++
			}
		}
		if got, _ := snap.Data()["views_m"].(int64); got != want || want == 0 || cur.IsZero() {
			t.Errorf("%s: views_m = %d in the bucket of %v; want %d, the views committed since", id, got, cur, want)
		}
	}
	view(before, old)
	if _, err := before.Reconcile(ctx, old); err != nil {
		t.Fatal(err)
	}
	view(before, old) // not folded before the window is declared
	view(before, unfolded)

	// The next minute: the window is declared, and the posts viewed again.
	time.Sleep(time.Until(time.Now().Truncate(time.Minute).Add(time.Minute + 100*time.Millisecond)))
	view(after, old)
	view(after, old)
	if _, err := after.Reconcile(ctx, old); err != nil {
		t.Fatal(err)
	}
	since(old)

	// A post created before the minute and never folded: its first fold
	// reads its count at the bucket's start too.
	view(after, unfolded)
	ops.Reset()
	if _, err := after.Reconcile(ctx, unfolded); err != nil {
		t.Fatal(err)
	}
	withRead, withTx := ops.Reads(), ops.Transactions()
	since(unfolded)

	// A post created in this minute: its window counts from its creation,
	// with no read of the past.
	fresh := coll + "/new"
	if _, err := fs.Doc(fresh).Create(ctx, map[string]any{"title": "a new post"}); err != nil {
		t.Fatal(err)
	}
	view(after, fresh)
	ops.Reset()
	if _, err := after.Reconcile(ctx, fresh); err != nil {
		t.Fatal(err)
	}
	if got := readField(t, fs, fresh, "views_m"); got != 1 {
		t.Errorf("the new post's views_m = %d, want 1", got)
	}
	if ops.Transactions() != withTx-1 {
		t.Errorf("the new post's first fold read %d in %d transactions, the unfolded old one's %d in %d; want one transaction fewer: no count at the bucket's start", ops.Reads(), ops.Transactions(), withRead, withTx)
	}
}

func readField(t *testing.T, fs *firestore.Client, path, field string) int64 {
	t.Helper()
	snap, err := fs.Doc(path).Get(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	n, _ := snap.Data()[field].(int64)
	return n
}
