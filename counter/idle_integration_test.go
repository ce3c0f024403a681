package counter_test

import (
	"context"
	"testing"
	"time"

	"github.com/tallycounters/tally/counter"
	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/fold"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/testkit/layouttest"
)

// TestWindowsAfterAnIdleSpell: in a zone whose hours are 3 seconds long
// (tztest.Cycle), a post folded in one bucket, moved on by the boundary
// job at the next, and viewed again three buckets later, is folded with
// no word of unread bucket starts, and its series is exact: the buckets
// between counted nothing. A post viewed in a bucket whose view no fold
// took until two buckets later has that view in the bucket it was made
// in: the fold reads each start it crosses. Before, both folds reported
// the starts as unread, and the second counted its late view in the
// current bucket.
func TestWindowsAfterAnIdleSpell(t *testing.T) {
	t.Parallel()
	fs := emulatortest.Client(t)
	ctx := context.Background()
	zone, bucket := cycle(t)
	coll := "idle" + emulatortest.ID(t)
	layout := core.Default()
	var err error
	if layout.Docs, err = core.ParseCounts(coll + ":views,views_h=views per hour keep 20"); err != nil {
		t.Fatal(err)
	}
	layout.Zone = zone
	c := counter.New(fs, counter.Options{Layout: layouttest.Public(layout), Spacing: window})
	f := fold.NewFolder(fs, layout, window)
	idle, late := coll+"/idle", coll+"/late"
	for _, p := range []string{idle, late} {
		if _, err := fs.Doc(p).Create(ctx, map[string]any{"title": "a post"}); err != nil {
			t.Fatal(err)
		}
	}
	nextBucket := func() { time.Sleep(time.Until(bucket(time.Now()).Add(3*time.Second + 100*time.Millisecond))) }
	views := map[string][]time.Time{}
	view := func(id string) {
		t.Helper()
		at, err := c.AddCommitted(ctx, id, "views", 1)
		if err != nil {
			t.Fatal(err)
		}
		views[id] = append(views[id], at)
	}
	foldNow := func(id string) {
		t.Helper()
		out, err := f.Fold(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Unread) > 0 {
			t.Errorf("%s: the fold reports unread bucket starts %v", id, out.Unread)
		}
	}

	nextBucket()
	view(idle)
	view(late)
	foldNow(idle)
	foldNow(late)
	nextBucket()
	// The boundary job moves both at the bucket's start, as serve and the
	// scheduler run it: each has no next boundary then, as it counted
	// nothing since.
	if rep, err := c.MoveWindows(ctx, time.Now(), nil); err != nil || rep.Moved != 2 {
		t.Fatalf("the boundary job: %+v, %v; want both moved", rep, err)
	}
	view(late) // not folded until two buckets on
	nextBucket()
	nextBucket()
	view(idle)
	view(late)
	foldNow(idle)
	foldNow(late)

	for _, id := range []string{idle, late} {
		checkSeries(t, c, id, "views_h", views[id], bucket)
	}
}
