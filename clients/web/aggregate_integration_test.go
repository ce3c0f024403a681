package web_test

import (
	"cmp"
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/tallycounters/tally/internal/testkit/browsertest"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/tools/authemu"
	"github.com/tallycounters/tally/internal/tools/stack"
	"github.com/tallycounters/tally/setup"
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
	post := newPost(t, fs)
	page := servePage(t, dir, map[string]any{"project": stack.DefaultProject, "firestore": s.EmulatorHost,
		"url": s.FunctionsURL + "/Increment", "counter": "posts/" + post.ID, "field": "comments"})
	bctx := browsertest.New(t, 2*time.Minute)
	if err := chromedp.Do(bctx, chromedp.Navigate(page), browsertest.WaitText("total", "0")); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"1", "2"} {
		if _, err := post.Collection("comments").NewDoc().Create(ctx, map[string]any{"text": "hi"}); err != nil {
			t.Fatal(err)
		}
		if err := chromedp.Do(bctx, browsertest.WaitText("total", want)); err != nil {
			t.Fatalf("waiting for %s comments: %v", want, err)
		}
	}
}

// TestChildShowsAtOnce: a comment the user adds with addChild shows in the
// post's count of comments at once, before anything is written, and the
// count never shows it twice, before or after the fold that holds it;
// one removed with removeChild is gone at once and never shows again.
func TestChildShowsAtOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bundle(t, dir)
	// Signed in, under the rules tally serve runs, which let signed-in
	// users write comments.
	s := startLocal(t, setup.EnvAuth, setup.AuthFirebase, setup.EnvCounts, "posts:comments=count(comments)")
	fs := emulatortest.ClientAt(t, s.EmulatorHost, stack.DefaultProject)
	ctx := context.Background()
	post := newPost(t, fs)
	user, err := authemu.SignUp(s.AuthHost, "grace@example.com", "secret-password")
	if err != nil {
		t.Fatal(err)
	}
	page := servePage(t, dir, map[string]any{"project": stack.DefaultProject, "firestore": s.EmulatorHost, "auth": s.AuthHost,
		"email": user.Email, "password": "secret-password",
		"url": s.FunctionsURL + "/Increment", "counter": "posts/" + post.ID, "field": "comments", "children": "comments"})
	bctx := browsertest.New(t, 2*time.Minute)
	if err := chromedp.Do(bctx, chromedp.Navigate(page), browsertest.WaitText("total", "0")); err != nil {
		t.Fatal(err)
	}
	// Each step: what the helper is called with, the count it shows at
	// once, and the count the post holds once folded.
	var id string
	for _, step := range []struct {
		js   string
		want int
	}{
		{`window.pending = window.addChild()`, 1},
		{`window.pending = window.removeChild(window.child)`, 0},
	} {
		js := fmt.Sprintf(`(() => { window.mark = window.shown.length; %s; return Number(document.getElementById("total").textContent); })()`, step.js)
		now, err := chromedp.Run(bctx, chromedp.Evaluate[int](js))
		if err != nil {
			t.Fatal(err)
		}
		if now != step.want {
			t.Errorf("%s: shows %d at once, want %d", step.js, now, step.want)
		}
		got, err := chromedp.Run(bctx, chromedp.Evaluate[string](`window.pending.then((id) => (window.child = id ?? window.child))`, chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatal(err)
		}
		id = cmp.Or(id, got)
		// The fold that holds it, as the page's own listener sees it.
		if err := chromedp.Do(bctx, browsertest.WaitJS(fmt.Sprintf(`window.stored === %d`, step.want))); err != nil {
			t.Fatalf("the post never held %d comments: %v", step.want, err)
		}
		since, err := chromedp.Run(bctx, chromedp.Evaluate[[]int](`window.shown.slice(window.mark).map((s) => s.n)`))
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range since {
			if n != step.want {
				t.Errorf("%s: showed %v from the call until the fold that holds it; want only %d", step.js, since, step.want)
				break
			}
		}
		if err := chromedp.Do(bctx, browsertest.WaitText("total", strconv.Itoa(step.want))); err != nil {
			t.Fatal(err)
		}
	}
	snap, err := post.Collection("comments").Doc(id).Get(ctx)
	if err == nil || snap.Exists() {
		t.Errorf("the removed comment %s is still there", id)
	}
}
