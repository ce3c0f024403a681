package web_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/tallycounters/tally/internal/testkit/browsertest"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/tools/authemu"
	"github.com/tallycounters/tally/internal/tools/stack"
	"github.com/tallycounters/tally/setup"
)

// TestLikesShowAtOnce: a like as a document through the client's like
// and onLike, under docs/mobile.md's rules, with likes=count(likes). A
// press shows the like and the count at once, writes the user's own
// posts/{p}/likes/{uid}, and the count never shows it twice, before or
// after the fold that holds it; a press while liked takes it back at once
// and the count never shows it again; a like as asked already writes
// nothing; another user's like (a phone's, written with its own SDK) adds
// one; signed out, like is refused with 401 and writes nothing.
func TestLikesShowAtOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bundle(t, dir)
	s := startWith(t, stack.Options{AppRules: mobileRules(t)}, setup.EnvAuth, setup.AuthFirebase, setup.EnvCounts, "posts:views,likes=count(likes)")
	fs := emulatortest.ClientAt(t, s.EmulatorHost, stack.DefaultProject)
	ctx := context.Background()
	post := newPost(t, fs)
	user, err := authemu.SignUp(s.AuthHost, "hedy@example.com", "secret-password")
	if err != nil {
		t.Fatal(err)
	}
	page := servePage(t, dir, map[string]any{"project": stack.DefaultProject, "firestore": s.EmulatorHost, "auth": s.AuthHost,
		"email": user.Email, "password": "secret-password", "url": s.FunctionsURL + "/Increment",
		"counter": "posts/" + post.ID, "field": "likes", "like": true})
	bctx := browsertest.New(t, 2*time.Minute)
	if err := chromedp.Do(bctx, chromedp.Navigate(page), browsertest.WaitText("total", "0"), browsertest.WaitJS(`window.liked === false`)); err != nil {
		t.Fatal(err)
	}
	mine := post.Collection("likes").Doc(user.UID)
	for _, want := range []int{1, 0} {
		js := `(() => { window.mark = window.shown.length; document.getElementById("like").click(); ` +
			`return [Number(document.getElementById("total").textContent), window.liked]; })()`
		// The click's handler runs before the script returns: what it shows then is what it showed at once.
		now, err := chromedp.Run(bctx, chromedp.Evaluate[[]any](js))
		if err != nil {
			t.Fatal(err)
		}
		if now[0] != float64(want) {
			t.Errorf("a press: shows %v at once, want %d", now[0], want)
		}
		// The fold that holds it, as the page's own listener sees it.
		if err := chromedp.Do(bctx, browsertest.WaitJS(fmt.Sprintf(`window.stored === %d && window.liked === %v`, want, want == 1))); err != nil {
			t.Fatalf("the post never held %d likes: %v", want, err)
		}
		since, err := chromedp.Run(bctx, chromedp.Evaluate[[]int](`window.shown.slice(window.mark).map((s) => s.n)`))
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range since {
			if n != want {
				t.Errorf("a press: showed %v from the press until the fold that holds it; want only %d", since, want)
				break
			}
		}
		if snap, err := mine.Get(ctx); (err == nil && snap.Exists()) != (want == 1) {
			t.Errorf("after a press to %d likes, the user's like document is there: %v (%v)", want, snap.Exists(), err)
		}
	}
	// Liked from the page, then as asked again: nothing written.
	if err := chromedp.Do(bctx, chromedp.Click(chromedp.ID("like")), browsertest.WaitJS(`window.stored === 1`)); err != nil {
		t.Fatal(err)
	}
	before, err := mine.Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(bctx, chromedp.Evaluate[any](`window.likeAgain()`, chromedp.EvalAwaitPromise)); err != nil {
		t.Fatal(err)
	}
	if after, err := mine.Get(ctx); err != nil || !after.UpdateTime.Equal(before.UpdateTime) {
		t.Errorf("a like as asked already wrote the like document (%v, then %v; %v)", before.UpdateTime, after.UpdateTime, err)
	}
	// Another user's like, from a phone: one more.
	if _, err := post.Collection("likes").Doc("a-phone-user").Create(ctx, map[string]any{"at": time.Now()}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(bctx, browsertest.WaitText("total", "2")); err != nil {
		t.Fatalf("another user's like: %v", err)
	}
	// Signed out: refused, and nothing written.
	refused, err := chromedp.Run(bctx, chromedp.Evaluate[any](`window.auth.signOut().then(() => window.likeAgain()).then(() => "", (e) => e.status)`, chromedp.EvalAwaitPromise))
	if err != nil || refused != float64(401) {
		t.Errorf("a like signed out: %v (%v); want refused with 401", refused, err)
	}
	if likes, err := post.Collection("likes").Documents(ctx).GetAll(); err != nil || len(likes) != 2 {
		t.Errorf("the post has %d likes (%v); want 2", len(likes), err)
	}
}
