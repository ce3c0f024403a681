package web_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/tallycounters/tally/internal/testkit/browsertest"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/tools/stack"
	"github.com/tallycounters/tally/setup"
)

// TestPressesWrittenIntoQuietPost: with TALLY_QUIET_IN_DOCUMENT, a press on
// a quiet post is written into the post itself (with its key's record),
// and one within a second of the post's last write goes to a shard; the
// page shows each press at once, never twice (the post holds a press
// written into it before any fold moves as_of past it), never dips, and
// ends at the presses.
func TestPressesWrittenIntoQuietPost(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bundle(t, dir)
	s := startWith(t, stack.Options{}, setup.EnvCounts, "posts:likes", setup.EnvInDocument, "true")
	fs := emulatortest.ClientAt(t, s.EmulatorHost, stack.DefaultProject)
	ctx := context.Background()
	post := newPost(t, fs)
	page := servePage(t, dir, map[string]any{"project": stack.DefaultProject, "firestore": s.EmulatorHost,
		"url": s.FunctionsURL + "/Increment", "counter": post.Path[len("projects/"+stack.DefaultProject+"/databases/(default)/documents/"):], "field": "likes"})
	bctx := browsertest.New(t, 3*time.Minute)
	if err := chromedp.Do(bctx, chromedp.Navigate(page), browsertest.WaitText("total", "0")); err != nil {
		t.Fatal(err)
	}
	presses := 0
	press := func() {
		t.Helper()
		presses++
		after, err := chromedp.Run(bctx, chromedp.Evaluate[string](`document.getElementById("like").click(), document.getElementById("total").textContent`))
		if err != nil {
			t.Fatal(err)
		}
		if after != fmt.Sprint(presses) {
			t.Errorf("right after press %d the number was %q: not shown at once", presses, after)
		}
	}
	// Three presses on the post quiet for more than a second: into it.
	for range 3 {
		emulatortest.Until(t, "the post quiet for 1.5 s", func() (any, bool) {
			snap, err := post.Get(ctx)
			if err != nil {
				return err, false
			}
			return snap.UpdateTime, time.Since(snap.UpdateTime) > 1500*time.Millisecond
		})
		press()
		if err := chromedp.Do(bctx, browsertest.WaitText("total", fmt.Sprint(presses))); err != nil {
			t.Fatal(err)
		}
		emulatortest.WaitField(t, post, "likes", int64(presses)) // answered: the post holds it
	}
	// Four at once: within a second of the last, to shards.
	for range 4 {
		press()
	}
	emulatortest.WaitField(t, post, "likes", int64(presses))
	time.Sleep(1500 * time.Millisecond) // a fold window and more: a press counted twice would show now
	if err := chromedp.Do(bctx, browsertest.WaitText("total", fmt.Sprint(presses))); err != nil {
		t.Fatal(err)
	}
	shown, err := chromedp.Run(bctx, chromedp.Evaluate[[]shownAt](`window.shown`))
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(shown); i++ {
		if shown[i].N < shown[i-1].N {
			t.Errorf("the number dipped from %d to %d", shown[i-1].N, shown[i].N)
		}
	}
	if slices.ContainsFunc(shown, func(s shownAt) bool { return s.N > int64(presses) }) {
		t.Errorf("the number went through %v; want it never past %d", shown, presses)
	}
	snap, err := post.Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	own, _ := snap.DataAtPath([]string{"_tally", "own", "likes"})
	if n, _ := own.(int64); n < 3 {
		t.Errorf("the post's own part is %v; want the 3 quiet presses written into it", own)
	}
	failures, _ := chromedp.Run(bctx, chromedp.Evaluate[[]string](`window.failures`))
	if len(failures) > 0 {
		t.Errorf("actions failed: %v", failures)
	}
}
