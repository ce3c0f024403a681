package rollup

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/firestore"
	"cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/core/aggregate"
)

// reconcileMost is the most comments BenchmarkAggregateChange backfills
// with a reconcile. The emulator scans all of a collection's documents for
// each range aggregation (about 20 µs a document here), where Firestore
// reads only the range's index entries: a reconcile of 1,000,000 comments
// would run about 2,000 aggregations of about 20 s each on the emulator.
const reconcileMost = 100_000

// seedParts writes on the post name, already reconciled with no comments,
// what a reconcile of its comments ids would: the parts, each of
// aggregate.PartMax/2 ids in order (a partition of all ids that starts at
// ""; a reconcile divides the line of ids evenly instead, which puts about
// as many in each), as of now, and the count, comments=count(comments).
// It keeps the shape of the part the first reconcile wrote.
func seedParts(t testing.TB, client *firestore.Client, name string, ids []string) {
	t.Helper()
	ctx := context.Background()
	at := time.Now().Truncate(time.Microsecond) // every comment was acknowledged before
	snap, err := client.Doc(name).Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	path := firestore.FieldPath{core.FieldBookkeeping, aggregate.FieldParts, "comments"}
	first, err := snap.DataAtPath(append(slices.Clone(path), aggregate.PartKey("")))
	shape, ok := first.(map[string]any)
	if err != nil || !ok || shape["at"] == nil {
		t.Fatalf("the reconcile of an empty post wrote no first part at %v: %v", path, snap.Data())
	}
	res, err := client.Doc(name).Collection("comments").NewAggregationQuery().WithCount("n").Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res["n"].(*firestorepb.Value); n.GetIntegerValue() != int64(len(ids)) {
		t.Fatalf("the post has %v comments, want the %d made", n, len(ids))
	}
	ids = slices.Sorted(slices.Values(ids))
	parts := map[string]any{}
	for from := 0; from < len(ids); from += aggregate.PartMax / 2 {
		lo := ""
		if from > 0 {
			lo = ids[from]
		}
		n := int64(min(aggregate.PartMax/2, len(ids)-from))
		part := maps.Clone(shape)
		part["at"], part["n"], part["v"] = at, n, map[string]any{"comments": n} // the part's value of the one aggregate, a count
		parts[aggregate.PartKey(lo)] = part
	}
	if _, err := client.Doc(name).Update(ctx, []firestore.Update{
		{FieldPath: path, Value: parts},
		{Path: "comments", Value: int64(len(ids))},
	}); err != nil {
		t.Fatal(err)
	}
}

// createChildren creates n documents in coll and returns their ids: with a
// bulk writer per 50,000, as each keeps to 500 writes a second at first,
// and at most 4, as the emulator holds a thread for each write in flight
// (21 writers of 1,000,000 documents left its JVM unable to make more).
func createChildren(t testing.TB, client *firestore.Client, coll *firestore.CollectionRef, n int) []string {
	t.Helper()
	ctx := context.Background()
	ids := make([]string, n)
	for i := range ids {
		ids[i] = coll.NewDoc().ID
	}
	writers := min(4, n/50_000+1)
	errs := make(chan error, writers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			var mine []string
			for i := w; i < n; i += writers {
				mine = append(mine, ids[i])
			}
			if err := createAll(ctx, client, coll, mine); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
	return ids
}

// createAll creates the documents ids in coll with one bulk writer, 5,000
// at a time: a write the emulator refused (it does, past some load, with
// the bulk writer's retries spent) is tried again, and one it made
// already is taken as made.
func createAll(ctx context.Context, client *firestore.Client, coll *firestore.CollectionRef, ids []string) error {
	bw := client.BulkWriter(ctx)
	defer bw.End()
	for tries := 0; len(ids) > 0; tries++ {
		if tries == 5 {
			return fmt.Errorf("%d comments not made after %d tries", len(ids), tries)
		}
		var failed []string
		for from := 0; from < len(ids); from += 5000 {
			chunk := ids[from:min(from+5000, len(ids))]
			jobs := make([]*firestore.BulkWriterJob, len(chunk))
			for i, id := range chunk {
				var err error
				if jobs[i], err = bw.Create(coll.Doc(id), comment(id)); err != nil {
					return err
				}
			}
			bw.Flush()
			for i, job := range jobs {
				if _, err := job.Results(); err != nil && status.Code(err) != codes.AlreadyExists {
					failed = append(failed, chunk[i])
				}
			}
		}
		ids = failed
	}
	return nil
}

// comment is what a comment of the cost tests holds: a text, and values
// for every aggregate form (allForms) to count, filter, sum and average,
// taken from its id.
func comment(id string) map[string]any {
	c := map[string]any{"text": "old", "hidden": id[0]%3 == 0, "score": int64(id[1] % 7)}
	if id[2]%5 != 0 {
		c["stars"] = int64(1 + id[2]%5)
	}
	return c
}
