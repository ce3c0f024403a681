package stack

import (
	"context"
	"fmt"
	"testing"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/internal/testkit/emulatortest"
)

// aggregateForms declares all four aggregate forms over a post's
// comments, beside likes and views.
const aggregateForms = `posts:likes,views,comments=count(comments),shown=count(comments where hidden == false),` +
	`score=sum(comments.score),stars=avg(comments.stars)`

// aggregatedPost starts a stack with every aggregate form declared on
// posts, folding each a window of 300 ms, and creates a post.
func aggregatedPost(t *testing.T) (*Stack, *firestore.Client, *firestore.DocumentRef) {
	t.Helper()
	paths := emulatortest.RequirePaths(t)
	s, client := startConfig(t, paths, envConfig(t, map[string]string{"TALLY_COUNTS": aggregateForms, "TALLY_ROLLUP_WINDOW": "300ms"}))
	doc := client.Collection("posts").Doc(emulatortest.ID(t))
	if _, err := doc.Create(context.Background(), map[string]any{"title": "big"}); err != nil {
		t.Fatal(err)
	}
	return s, client, doc
}

// TestAggregatesPastAPart: a post gets 1,001 comments in three commits
// of 400, 400 and 201, as a client's batched writes make them, and a like,
// all through the emulator's own delivery of events; then comments are
// edited and deleted across its parts. Every aggregate form ends equal to
// Firestore's own aggregation over the comments, and the like is counted
// in the same document. (A sum over a range of ids is a query Firestore
// refuses, so sums and averages are kept by their children's records.)
func TestAggregatesPastAPart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, client, doc := aggregatedPost(t)
	comments := doc.Collection("comments")
	var refs []*firestore.DocumentRef
	for _, batch := range []int{400, 400, 201} {
		err := client.RunTransaction(ctx, func(ctx context.Context, tx *firestore.Transaction) error {
			for i := range batch {
				ref := comments.NewDoc()
				refs = append(refs, ref)
				c := map[string]any{"score": int64(1), "hidden": i%3 == 0, "text": "hi"}
				if i%4 != 0 {
					c["stars"] = int64(1 + i%5)
				}
				if err := tx.Create(ref, c); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if code, body := increment(t, s, fmt.Sprintf(`{"counter":%q,"field":"likes"}`, "posts/"+doc.ID)); code != 200 {
		t.Fatalf("like: %d %s", code, body)
	}
	settled(t, doc, map[string]any{"likes": int64(1), "comments": int64(1001)})
	got := settled(t, doc, truth(t, client, comments.Query))
	parts, _ := got["_tally"].(map[string]any)["parts"].(map[string]any)["comments"].(map[string]any)
	if len(parts) < 2 {
		t.Errorf("1,001 comments are in %d part(s); want them split", len(parts))
	}

	// Edits and deletes across the parts, some of them twice.
	for i, ref := range refs {
		var err error
		switch i % 97 {
		case 1:
			_, err = ref.Update(ctx, []firestore.Update{{Path: "score", Value: 2.5}, {Path: "hidden", Value: false}})
		case 2:
			_, err = ref.Delete(ctx)
		case 3:
			_, err = ref.Update(ctx, []firestore.Update{{Path: "stars", Value: firestore.Delete}, {Path: "score", Value: "none"}})
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	settled(t, doc, truth(t, client, comments.Query))
	time.Sleep(time.Second) // events of writes that changed nothing the aggregates hold still come
	settled(t, doc, truth(t, client, comments.Query))
}
