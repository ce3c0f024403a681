package counter_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"cloud.google.com/go/firestore"
	"cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tallycounters/tally/counter"
	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/fold"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/testkit/layouttest"
	"github.com/tallycounters/tally/internal/testkit/tztest"
)

// TestBoundaryReadsOneShardByKey: the boundary job moves a post on one
// shard with no query, through a client that refuses every aggregation:
// its shard 0, read by key at the bucket's start, held its whole count
// then. A post on four shards is moved with the aggregation, as before.
// Both exactly: views made before the start and folded by none, in the
// bucket before and the one before that (the job reads both starts),
// count at the boundary, one made after it does not until a fold takes
// it, and each bucket of the series holds the views made in it. Before, the post
// on one shard was moved by an aggregation over its shards, which the
// emulator runs by a scan of every document it holds.
func TestBoundaryReadsOneShardByKey(t *testing.T) {
	t.Parallel()
	fs, noAggregation := emulatortest.Client(t), refusingAggregations(t)
	ctx := context.Background()
	zone, bucket := cycle(t)
	var err error
	type post struct {
		id      string
		shards  int
		c, move *counter.Client
		f       *fold.Folder
		views   []time.Time
	}
	var posts []*post
	for _, p := range []struct {
		shards int
		move   *firestore.Client
	}{{1, noAggregation}, {4, fs}} {
		coll := fmt.Sprintf("boundary%d%s", p.shards, emulatortest.ID(t))
		layout := core.Default()
		if layout.Docs, err = core.ParseCounts(coll + ":views,views_h=views per hour keep 20"); err != nil {
			t.Fatal(err)
		}
		layout.Zone = zone
		o := counter.Options{Layout: layouttest.Public(layout), Spacing: window}
		id := coll + "/p"
		if _, err := fs.Doc(id).Create(ctx, map[string]any{"title": "a post"}); err != nil {
			t.Fatal(err)
		}
		if _, err := fs.Doc(id).Update(ctx, []firestore.Update{{FieldPath: layout.NumShardsPath(), Value: p.shards}}); err != nil {
			t.Fatal(err)
		}
		posts = append(posts, &post{id: id, shards: p.shards, c: counter.New(fs, o), move: counter.New(p.move, o), f: fold.NewFolder(fs, layout, window)})
	}
	view := func(p *post) {
		t.Helper()
		at, err := p.c.AddCommitted(ctx, p.id, "views", 1)
		if err != nil {
			t.Fatal(err)
		}
		p.views = append(p.views, at)
	}
	foldNow := func(p *post) {
		t.Helper()
		if _, err := p.f.Fold(ctx, p.id); err != nil {
			t.Fatal(err)
		}
	}

	nextBucket := func() { time.Sleep(time.Until(bucket(time.Now()).Add(3*time.Second + 100*time.Millisecond))) }
	nextBucket()
	for _, p := range posts {
		for range 3 {
			view(p)
		}
		foldNow(p)
		view(p) // folded by none before the boundary
	}
	nextBucket()
	for _, p := range posts {
		view(p) // nor this, a bucket later: the job reads both starts it crosses
	}
	nextBucket()
	for _, p := range posts {
		view(p) // after the boundary
		now := time.Now()
		rep, err := p.move.MoveWindows(ctx, now, nil)
		if err != nil || rep.Moved != 1 || rep.Errors != 0 {
			t.Fatalf("%d shards: the boundary job: %+v, %v; want the post moved", p.shards, rep, err)
		}
		before := 0
		for _, at := range p.views {
			if at.Before(bucket(now)) {
				before++
			}
		}
		if got := total(t, fs, p.id, "views"); got != int64(before) {
			t.Errorf("%d shards: views %d after the boundary job, want %d, the views before its bucket's start", p.shards, got, before)
		}
		foldNow(p)
		if got := total(t, fs, p.id, "views"); got != int64(len(p.views)) {
			t.Errorf("%d shards: views %d after a fold, want %d", p.shards, got, len(p.views))
		}
		checkSeries(t, p.c, p.id, "views_h", p.views, bucket)
	}
}

// total reads the integer field of the document id.
func total(t *testing.T, fs *firestore.Client, id, field string) int64 {
	t.Helper()
	snap, err := fs.Doc(id).Get(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	n, _ := snap.Data()[field].(int64)
	return n
}

// checkSeries checks that each bucket of id's window holds the views made
// in it, by the views' commit times, and no other bucket holds any.
func checkSeries(t *testing.T, c *counter.Client, id, window string, views []time.Time, bucket func(time.Time) time.Time) {
	t.Helper()
	want := map[time.Time]int64{}
	for _, at := range views {
		want[bucket(at).UTC()]++
	}
	series, err := c.Series(context.Background(), id, window)
	if err != nil {
		t.Fatal(err)
	}
	got := map[time.Time]int64{}
	for _, b := range series {
		if b.Count != 0 {
			got[b.Start.UTC()] = b.Count
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s: buckets %v, want %v", id, got, want)
	}
}

// refusingAggregations is a client of the emulator that runs no
// aggregation query: it answers each with an error.
func refusingAggregations(t *testing.T) *firestore.Client {
	return emulatortest.Refusing(t, func(*firestorepb.StructuredQuery) error {
		return status.Error(codes.FailedPrecondition, "this client runs no aggregation")
	})
}

// cycle is a zone whose hours are 3 seconds long for 5 minutes
// (tztest.Cycle), and the start of the bucket of hours an instant is in.
func cycle(t *testing.T) (*time.Location, func(time.Time) time.Time) {
	t.Helper()
	first, changes := tztest.Cycle(time.Now(), 3*time.Second, 5*time.Minute)
	zone, err := tztest.Location("Tally/Cycle", first, changes)
	if err != nil {
		t.Fatal(err)
	}
	return zone, func(at time.Time) time.Time {
		var start time.Time
		for _, ch := range changes {
			if !ch.At.After(at) {
				start = ch.At
			}
		}
		return start
	}
}
