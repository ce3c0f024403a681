package web_test

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/tallycounters/tally/internal/browsertest"
	"github.com/tallycounters/tally/internal/emulatortest"
	"github.com/tallycounters/tally/internal/stack"
)

// TestAggregateShows: the client reads an aggregate as it reads a count:
// a page that shows a post's count of comments with onCount shows each
// comment an app writes, once Rollup has folded it.
func TestAggregateShows(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bundle(t, dir)
	s := startLocal(t, "TALLY_COUNTS", "posts:likes,comments=count(comments)")
	fs := emulatortest.ClientAt(t, s.EmulatorHost, stack.DefaultProject)
	ctx := context.Background()
	post := fs.Collection("posts").Doc(emulatortest.ID(t))
	if _, err := post.Create(ctx, map[string]any{"title": "hello"}); err != nil {
		t.Fatal(err)
	}
	page := servePage(t, dir, map[string]any{"project": stack.DefaultProject, "firestore": s.EmulatorHost,
		"url": s.FunctionsURL + "/Increment", "counter": "posts/" + post.ID, "field": "comments"})
	bctx := browsertest.New(t, 2*time.Minute)
	if err := chromedp.Do(bctx, chromedp.Navigate(page), waitText("total", "0")); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"1", "2"} {
		if _, err := post.Collection("comments").NewDoc().Create(ctx, map[string]any{"text": "hi"}); err != nil {
			t.Fatal(err)
		}
		if err := chromedp.Do(bctx, waitText("total", want)); err != nil {
			t.Fatalf("waiting for %s comments: %v", want, err)
		}
	}
}
