package stack

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/firestore"
	"cloud.google.com/go/firestore/apiv1/firestorepb"

	"github.com/tallycounters/tally/counter"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
)

// aggregatesSpec declares a post's comment aggregates and the site's count
// of posts.
const aggregatesSpec = `posts:likes,comments=count(comments),shown=count(comments where hidden == false),` +
	`score=sum(comments.score),stars=avg(comments.stars);stats/site:posts=count(/posts)`

// TestAggregatesEndToEnd: comments created, edited and deleted at once,
// through the emulator's own delivery of their events to Rollup, leave a
// post's aggregates equal to Firestore's own aggregations over its
// comments, and the site's count of posts equal to theirs; the post's own
// fields are untouched, and a post deleted stays deleted whatever its
// comments' events do after.
func TestAggregatesEndToEnd(t *testing.T) {
	t.Parallel()
	cfg, client := startCounts(t, aggregatesSpec)
	ctx := context.Background()
	if _, err := client.Doc("stats/site").Set(ctx, map[string]any{"name": "site"}); err != nil {
		t.Fatal(err)
	}
	post := client.Collection("posts").Doc(emulatortest.ID(t))
	if _, err := post.Create(ctx, map[string]any{"title": "hello"}); err != nil {
		t.Fatal(err)
	}
	comments := post.Collection("comments")

	// 60 comments at once, then edits and deletes of some, at once.
	var wg sync.WaitGroup
	refs := make([]*firestore.DocumentRef, 60)
	for i := range refs {
		refs[i] = comments.NewDoc()
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := map[string]any{"hidden": i%4 == 0, "score": int64(i % 7), "text": "hi"}
			if i%5 != 0 {
				c["stars"] = int64(1 + i%5)
			}
			if _, err := refs[i].Create(ctx, c); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	for i, ref := range refs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			switch i % 6 {
			case 1:
				_, err = ref.Update(ctx, []firestore.Update{{Path: "hidden", Value: true}, {Path: "score", Value: int64(10)}})
			case 2:
				_, err = ref.Delete(ctx)
			case 3:
				_, err = ref.Update(ctx, []firestore.Update{{Path: "hidden", Value: false}, {Path: "stars", Value: rand.N(int64(5)) + 1}})
			}
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()

	want := truth(t, client, comments.Query)
	got := settled(t, post, want)
	t.Logf("post: %v; want %v", got, want)
	if got["title"] != "hello" || got["likes"] != int64(0) {
		t.Errorf("post = %v: its title changed, or its likes are not 0 (it has no like, and tally gave it its counts when it was created)", got)
	}
	// The Go client reads them as the post holds them; the tally command
	// (counter.Client) cannot add to one.
	cl := counter.New(client, counter.Options{Layout: cfg.Layout})
	if n, err := cl.Get(ctx, "posts/"+post.ID, "comments"); err != nil || n != want["comments"] {
		t.Errorf("Get(comments) = %d, %v; want %v", n, err, want["comments"])
	}
	if err := cl.Add(ctx, "posts/"+post.ID, "comments", 1); err == nil {
		t.Error("Add to an aggregate was taken")
	}
	settled(t, client.Doc("stats/site"), map[string]any{"posts": firestoreAggregate(t, client.Collection("posts").NewAggregationQuery().WithCount("n"), "n")})

	// A post deleted with its comments stays deleted.
	if _, err := post.Delete(ctx); err != nil {
		t.Fatal(err)
	}
	for _, ref := range refs {
		if _, err := ref.Delete(ctx); err != nil {
			t.Fatal(err)
		}
	}
	settled(t, client.Doc("stats/site"), map[string]any{"posts": firestoreAggregate(t, client.Collection("posts").NewAggregationQuery().WithCount("n"), "n")})
	time.Sleep(time.Second) // the comments' delete events, which were delivered before stats/site settled, had a fold's time to act
	if snap, err := post.Get(ctx); err == nil || snap.Exists() {
		t.Errorf("the deleted post is back: %v", snap.Data())
	}
}

// truth is Firestore's own aggregations over a post's comments, as the
// post's fields should hold them.
func truth(t *testing.T, client *firestore.Client, q firestore.Query) map[string]any {
	t.Helper()
	avg := firestoreAggregate(t, q.NewAggregationQuery().WithAvg("stars", "a"), "a")
	if f, ok := avg.(float64); ok {
		avg = fmt.Sprintf("%.9f", f)
	}
	shown := q.Where("hidden", "==", false)
	return map[string]any{
		"comments": firestoreAggregate(t, q.NewAggregationQuery().WithCount("n"), "n"),
		"shown":    firestoreAggregate(t, shown.NewAggregationQuery().WithCount("n"), "n"),
		"score":    firestoreAggregate(t, q.NewAggregationQuery().WithSum("score", "s"), "s"),
		"stars":    avg,
	}
}

// firestoreAggregate runs aq and returns its result named name.
func firestoreAggregate(t *testing.T, aq *firestore.AggregationQuery, name string) any {
	t.Helper()
	res, err := aq.Get(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	switch v := res[name].(*firestorepb.Value).GetValueType().(type) {
	case *firestorepb.Value_IntegerValue:
		return v.IntegerValue
	case *firestorepb.Value_DoubleValue:
		return v.DoubleValue
	}
	return nil
}

// settled waits until doc's fields hold want (an average compared to nine
// places), and returns its data. A minute without is a failure: the
// emulator delivers each event within seconds.
func settled(t *testing.T, doc *firestore.DocumentRef, want map[string]any) map[string]any {
	t.Helper()
	deadline := time.Now().Add(emulatortest.Liveness) // a liveness bound
	for {
		snap, err := doc.Get(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		data, ok := snap.Data(), true
		for k, v := range want {
			got := data[k]
			if f, isFloat := got.(float64); isFloat {
				got = fmt.Sprintf("%.9f", f)
			}
			if f, isFloat := v.(float64); isFloat {
				v = fmt.Sprintf("%.9f", f)
			}
			ok = ok && got == v
		}
		if ok {
			return data
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s = %v after a minute; want %v", doc.Path, data, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
