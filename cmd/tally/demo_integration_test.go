package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"

	"github.com/tallycounters/tally/internal/testkit/browsertest"
)

// TestDemoInABrowser runs TALLY_AUTH=firebase go run ./cmd/tally serve
// (on a free port) and opens its /demo?counter=demo-likes in a headless
// Chromium: signed out, the Like button is disabled and says to sign in; a
// user signs in against the Auth emulator serve started, likes, sees the
// total reach 1 and the button pressed and labelled Liked, reloads, is
// still signed in, sees the button pressed (from their vote document), and
// a second press takes the like back, as in the feed. A press offline shows
// at once and says it waits to be sent, and is counted once the browser is
// back online; one with the server out of reach says that, and that the
// press is kept, and is counted once it can be reached. The page is served
// with a Content-Security-Policy that allows its own script and style
// only, and the browser enforces it.
func TestDemoInABrowser(t *testing.T) {
	t.Parallel()
	cmd, out, stderr := start(t, []string{"TALLY_AUTH=firebase"}, "serve", "--port", "0")
	r := waitReady(t, out, stderr)
	if !strings.Contains(strings.Join(r.lines, "\n"), "Firebase Auth emulator at") {
		t.Fatalf("serve started no Auth emulator:\n%s", strings.Join(r.lines, "\n"))
	}
	ctx := browsertest.New(t, 3*time.Minute)

	page := r.functions + "/demo?counter=demo-likes"
	checkDemoHeaders(t, page)
	if resp, err := http.Get(r.functions + "/"); err != nil {
		t.Errorf("GET / of serve with no app: %v", err)
	} else if resp.Body.Close(); resp.Request.URL.Path != "/demo" {
		t.Errorf("GET / of serve with no app ends at %s; want the demo page", resp.Request.URL)
	}
	id := func(s string) chromedp.ID { return chromedp.ID(s) }
	err := chromedp.Do(ctx,
		chromedp.Navigate(page),
		browsertest.WaitJS(`document.getElementById("like").disabled && document.getElementById("like").textContent === "Sign in to like"`),
		signIn(page),
		browsertest.WaitJS(`!document.getElementById("like").disabled`),
		chromedp.Click(id("like")),
		browsertest.WaitText("total", "1"), // at once, before Increment answers
		browsertest.WaitText("total-noun", "like"),
		browsertest.WaitText("like", "Liked"),
		browsertest.WaitText("result", "Your like counts."), // once it has
	)
	if err != nil {
		t.Fatalf("sign in and like: %v\n%s", err, stderr)
	}
	if who, _ := chromedp.Run(ctx, chromedp.Text(id("who"))); !strings.HasPrefix(who, "ada-") || !strings.HasSuffix(who, "@example.com") {
		t.Errorf("signed in as %q, want the account just made", who)
	}
	err = chromedp.Do(ctx,
		chromedp.Reload(),
		browsertest.WaitJS(`!document.getElementById("like").disabled`),                               // still signed in
		browsertest.WaitJS(`document.getElementById("like").getAttribute("aria-pressed") === "true"`), // and the page knows the like is theirs
		chromedp.Click(id("like")),
		browsertest.WaitText("total", "0"), // at once
		browsertest.WaitText("like", "Like"),
		browsertest.WaitText("result", "Your like is taken back."),
	)
	if err != nil {
		t.Fatalf("reload and press again: %v", err)
	}
	if got := shardSum(t, r.emulator, "demo-likes"); got != 0 {
		t.Errorf("the shards hold %d after the like was taken back, want 0", got)
	}
	// Offline, a press shows at once, and the page says the like waits to
	// be sent; back online, it is sent, and counted.
	browsertest.SetOffline(t, ctx, true)
	err = chromedp.Do(ctx,
		chromedp.Click(id("like")),
		browsertest.WaitText("total", "1"),
		browsertest.WaitJS(`document.getElementById("like").dataset.pending === "true" && `+
			`document.getElementById("result").textContent.startsWith("Offline: your like is saved on this device")`),
	)
	if err != nil {
		t.Fatalf("a press offline: %v", err)
	}
	browsertest.SetOffline(t, ctx, false)
	if err := chromedp.Do(ctx, browsertest.WaitText("result", "Your like counts."), browsertest.WaitJS(`!document.getElementById("like").dataset.pending`)); err != nil {
		t.Fatalf("back online: %v", err)
	}
	if got := shardSum(t, r.emulator, "demo-likes"); got != 1 {
		t.Errorf("the shards hold %d after the like pressed offline was sent, want 1", got)
	}
	// With the server out of reach, a press shows at once, and the page
	// says so, and that the press is kept; once it can be reached, the
	// press is sent, and counted once.
	browsertest.SetUnreachable(t, ctx, "*://*:*/Increment", true)
	err = chromedp.Do(ctx,
		chromedp.Click(id("like")),
		browsertest.WaitText("total", "0"),
		browsertest.WaitJS(`document.getElementById("result").textContent.startsWith("The server cannot be reached just now. Your like is kept on this device")`),
	)
	if err != nil {
		shown, _ := chromedp.Run(ctx, chromedp.Text(id("result")))
		t.Fatalf("a press with the server out of reach says %q: %v", shown, err)
	}
	browsertest.SetUnreachable(t, ctx, "", false)
	if err := chromedp.Do(ctx, browsertest.WaitText("result", "Your like is taken back."), browsertest.WaitJS(`!document.getElementById("like").dataset.pending`)); err != nil {
		t.Fatalf("with the server back: %v", err)
	}
	if got := shardSum(t, r.emulator, "demo-likes"); got != 0 {
		t.Errorf("the shards hold %d after the press was sent, want 0", got)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if code := waitExit(t, cmd); code != 0 {
		t.Errorf("serve exited %d: %s", code, stderr)
	}
}

// checkDemoHeaders checks the headers the demo page is served with.
func checkDemoHeaders(t *testing.T, page string) {
	t.Helper()
	resp, err := http.Get(page)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	csp := resp.Header.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "script-src 'nonce-", "frame-ancestors 'none'", "connect-src 'self' http://127.0.0.1:"} {
		if !strings.Contains(csp, want) {
			t.Errorf("Content-Security-Policy %q lacks %q", csp, want)
		}
	}
	if got := resp.Header.Get("X-Content-Type-Options"); got != "nosniff" {
		t.Errorf("X-Content-Type-Options: %q, want nosniff", got)
	}
}

// TestDemoFeed runs the README's feed demo, TALLY_AUTH=firebase
// TALLY_COUNTS='posts:likes,views,comments=count(comments),likes_today=likes per day,hot=trend(likes + views/10, 6h),rank(likes)' go run ./cmd/tally serve, and opens its
// /demo in headless Chromium: a user signs in and sees the demo's posts,
// each view counted on the post; a like shows at once, in the post's likes
// and its likes today and the last bar of its week's sparkline, is counted
// on the post, and moves it to the top of the feed, most liked first, and
// of the Trending order; after a
// reload the page knows the user likes it, and each post has two views. A
// comment shows in its post's count of comments at once, and is counted on
// the post. Signed out, the Like buttons are disabled and say to sign in; a
// second press takes a like back. The signed-in feed is photographed at a
// phone's width and a desktop's (into TALLY_SCREENSHOTS, if set: the
// README's picture), and fits both without scrolling sideways.
func TestDemoFeed(t *testing.T) {
	t.Parallel()
	cmd, out, stderr := start(t, []string{"TALLY_AUTH=firebase", "TALLY_COUNTS=posts:likes,views,comments=count(comments),likes_today=likes per day,hot=trend(likes + views/10, 6h),rank(likes)"}, "serve", "--port", "0")
	r := waitReady(t, out, stderr)
	ctx := browsertest.New(t, 3*time.Minute)
	page := r.functions + "/demo"
	checkDemoHeaders(t, page)
	id := func(s string) chromedp.ID { return chromedp.ID(s) }
	post := func(p, sel string) string {
		return fmt.Sprintf(`document.querySelector('article[data-id=%q] %s')`, p, sel)
	}
	views := func(want string) chromedp.Action[chromedp.Void] {
		return browsertest.WaitJS(fmt.Sprintf(`[...document.querySelectorAll("article .views")].map((e) => e.textContent).join() === %q`, want))
	}
	err := chromedp.Do(ctx,
		chromedp.Navigate(page),
		browsertest.WaitJS(`[...document.querySelectorAll("article .like")].map((b) => b.disabled + " " + b.textContent).join() === `+
			`"true Sign in to like,true Sign in to like,true Sign in to like"`),
		signIn(page),
		chromedp.WaitVisible(id("signed-in")),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, 1, 1), // off the feed, which holds its order under the pointer
		views("1,1,1"),
	)
	if err != nil {
		t.Fatalf("sign in and see the posts: %v\n%s", err, stderr)
	}
	after, err := chromedp.Run(ctx, chromedp.Evaluate[string](post("counts", ".like")+`.click(), `+post("counts", ".likes")+`.textContent + " " + `+post("counts", ".likes-noun")+`.textContent + " " + `+
		post("counts", ".like")+`.ariaPressed + " " + `+post("counts", ".like")+`.textContent + " " + `+post("counts", ".today")+`.textContent + " " + `+
		`[...`+post("counts", ".spark")+`.children].map((r) => r.getAttribute("height")).join("/")`))
	if err != nil || after != "1 like true Liked 1 1/1/1/1/1/1/18" {
		t.Fatalf("right after Like the post shows %q (%v), want 1 like, pressed and labelled Liked, 1 today, and a week's sparkline up today", after, err)
	}
	if err := chromedp.Do(ctx, browsertest.WaitJS(`document.querySelector("article").dataset.id === "counts"`)); err != nil {
		t.Fatalf("the liked post does not move to the top: %v", err)
	}
	// what a person reads: each count labelled, today's with the count it
	// is of and the week's sparkline beside it, the trend, and the place
	stats := `document.querySelector('article[data-id="counts"] .stats').innerText.replace(/\s+/g, " ")`
	read := regexp.MustCompile(`^1 like · \d+ views? · 0 comments · 1 like today 7 days · #1 of 3$`)
	if err := chromedp.Do(ctx, browsertest.WaitJS(stats+`.endsWith("#1 of 3")`)); err != nil {
		t.Fatalf("the liked post's counts never showed its place: %v", err)
	}
	if text, err := chromedp.Run(ctx, chromedp.Evaluate[string](stats)); err != nil || !read.MatchString(text) {
		t.Errorf("the liked post reads %q (%v); want its likes, views, comments, likes today beside 7 days, and its place", text, err)
	}
	trend := regexp.MustCompile(`^trending \d+\.\d recent likes \+ views/10$`)
	if text, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('article[data-id="counts"] .trend').innerText`)); err != nil || !trend.MatchString(text) {
		t.Errorf("the liked post's trend reads %q (%v); want its score and what it weighs", text, err)
	}
	places := `[...document.querySelectorAll("article")].map((a) => a.dataset.id + " " + a.querySelector(".place").textContent).join()`
	if err := chromedp.Do(ctx, browsertest.WaitJS(places+` === "counts #1 of 3,hello #2 of 3,offline #2 of 3" || `+places+` === "counts #1 of 3,offline #2 of 3,hello #2 of 3"`)); err != nil {
		shown, _ := chromedp.Run(ctx, chromedp.Evaluate[string](places))
		t.Fatalf("each post's place: %q, want the liked one #1 of 3 and the others #2 (%v)", shown, err)
	}
	// Trending: the post liked, and viewed as the others were, is first.
	waitField(t, r.emulator, "posts/counts", "likes_today", 1)
	err = chromedp.Do(ctx, chromedp.Click(id("by-trend")), browsertest.WaitText("order", "trending first: likes and views of the last hours weigh most"),
		browsertest.WaitJS(`document.querySelector("article").dataset.id === "counts" && document.querySelectorAll("article").length === 3`),
		chromedp.Click(id("by-likes")), browsertest.WaitText("order", "most liked first"))
	if err != nil {
		t.Fatalf("the Trending order: %v", err)
	}
	err = chromedp.Do(ctx, chromedp.Reload(), views("2,2,2"),
		browsertest.WaitJS(post("counts", ".like")+`.ariaPressed === "true" && `+post("counts", ".likes")+`.textContent === "1"`))
	if err != nil {
		t.Fatalf("after a reload: %v", err)
	}
	comment := post("hello", "form") + `.elements.namedItem("text").value = "Great post <3", ` + post("hello", "form") + `.requestSubmit(), ` + post("hello", ".comments") + `.textContent`
	if n, err := chromedp.Run(ctx, chromedp.Evaluate[string](comment)); err != nil || n != "1" {
		t.Fatalf("right after Comment the post shows %q comments (%v), want 1", n, err)
	}
	if err := chromedp.Do(ctx, browsertest.WaitJS(post("hello", ".said .text")+`.textContent === "Great post <3"`)); err != nil {
		t.Fatalf("the comment's text is not shown under its post, as text: %v", err)
	}
	if who, err := chromedp.Run(ctx, chromedp.Evaluate[string](post("hello", ".said .who")+`.textContent`)); err != nil || !regexp.MustCompile(`^\S+ · (just now|\d+ min ago)$`).MatchString(who) {
		t.Errorf("the comment's author and time read %q (%v); want the author's name and how long ago", who, err)
	}
	screenshots(t, ctx)
	for _, p := range demoPostIDs {
		waitField(t, r.emulator, "posts/"+p, "likes", map[string]int64{"counts": 1}[p])
	}
	again, err := chromedp.Run(ctx, chromedp.Evaluate[string](post("counts", ".like")+`.click(), `+post("counts", ".likes")+
		`.textContent + " " + `+post("counts", ".like")+`.ariaPressed + " " + `+post("counts", ".like")+`.textContent + " " + `+post("counts", ".today")+`.textContent`))
	if err != nil || again != "0 false Like 0" {
		t.Fatalf("right after a second press the post shows %q (%v), want 0 likes, not pressed, labelled Like, 0 today", again, err)
	}
	holdsOrderUnderPointer(t, ctx, r.emulator, post)
	for _, p := range demoPostIDs {
		waitField(t, r.emulator, "posts/"+p, "likes", 0)
		waitField(t, r.emulator, "posts/"+p, "likes_today", 0)
		waitField(t, r.emulator, "posts/"+p, "views", 2)
		waitField(t, r.emulator, "posts/"+p, "comments", map[string]int64{"hello": 1}[p])
	}
	ownPlace(t, ctx, post)
	cmd.Process.Signal(syscall.SIGTERM)
	if code := waitExit(t, cmd); code != 0 {
		t.Errorf("serve exited %d: %s", code, stderr)
	}
}

// ownPlace writes a post as the signed-in user, with the demo's three at 0
// likes: the page shows the user's own place, #1 of 4 (all tied), then
// #2 of 4 once another post is liked, and #1 of 4 again once theirs is.
func ownPlace(t *testing.T, ctx context.Context, post func(p, sel string) string) {
	t.Helper()
	mine := func(want string) chromedp.Action[chromedp.Void] {
		return browsertest.WaitJS(`!document.getElementById("mine").hidden && document.getElementById("my-title").textContent === "Ada's post" && ` +
			fmt.Sprintf(`document.getElementById("my-place").textContent === %q`, want))
	}
	shown := func() string {
		s, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("mine").textContent`))
		return s
	}
	write := `(() => { const f = document.getElementById("write"); f.elements.namedItem("title").value = "Ada's post"; return f.querySelector("button"); })()`
	if err := chromedp.Do(ctx, browsertest.ClickJS(write), mine("#1 of 4")); err != nil {
		t.Fatalf("the user's own post: the page shows %q (%v), want #1 of 4", shown(), err)
	}
	// A post this user has not liked yet: one liked and taken back just
	// before may still be settling its vote on the page.
	if err := chromedp.Do(ctx, browsertest.ClickJS(post("hello", ".like")), mine("#2 of 4")); err != nil {
		t.Fatalf("another post liked: the page shows %q (%v), want #2 of 4", shown(), err)
	}
	own := `[...document.querySelectorAll("article")].find((a) => a.querySelector("h2").textContent === "Ada's post").querySelector(".like")`
	if err := chromedp.Do(ctx, browsertest.ClickJS(own), mine("#1 of 4")); err != nil {
		t.Fatalf("the user's post liked: the page shows %q (%v), want #1 of 4", shown(), err)
	}
}

// screenshots photographs the page at 390 and 1,280 CSS pixels wide, once
// nothing waits to be sent, and checks that it fits each width.
func screenshots(t *testing.T, ctx context.Context) {
	t.Helper()
	dir := os.Getenv("TALLY_SCREENSHOTS")
	if dir == "" {
		dir = t.TempDir()
	}
	for _, width := range []int64{1280, 390} {
		err := chromedp.Do(ctx, chromedp.EmulateViewport(width, 900), browsertest.WaitJS(`!document.querySelector("[data-pending]")`))
		if err != nil {
			t.Fatalf("at %d px: %v", width, err)
		}
		if wide, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth`)); wide > int(width) {
			t.Errorf("at %d px the page is %d px wide: it scrolls sideways", width, wide)
		}
		// the week's sparkline shares a line with another count
		shared := `[...document.querySelectorAll(".week")].every((w) => [...w.parentElement.children].some((o) => o !== w && ` +
			`Math.abs(o.getBoundingClientRect().top - w.getBoundingClientRect().top) < 6))`
		if ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](shared)); err != nil || !ok {
			t.Errorf("at %d px a week's sparkline sits alone on its line (%v)", width, err)
		}
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatalf("a screenshot at %d px: %v", width, err)
		}
		name := filepath.Join(dir, fmt.Sprintf("demo-%d.png", width))
		if err := os.WriteFile(name, png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// demoPostIDs are the posts serve's demo adds to an empty feed.
var demoPostIDs = []string{"hello", "counts", "offline"}

// signIn opens the demo page and makes an account on the Auth emulator,
// as a new user does: "Sign in" with an email that has no account is
// refused in plain words and makes none, and "Create account" makes it.
func signIn(page string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		id := func(s string) chromedp.ID { return chromedp.ID(s) }
		email := fmt.Sprintf("ada-%d@example.com", time.Now().UnixNano())
		return chromedp.Void{}, chromedp.Do(ctx,
			chromedp.Navigate(page),
			chromedp.WaitVisible(id("signin")),
			chromedp.SendKeys(id("email"), email),
			chromedp.SendKeys(id("password"), "secret-password"),
			chromedp.Click(id("signin")),
			browsertest.WaitJS(`document.getElementById("problem").textContent.includes("do not match an account")`),
			chromedp.Click(id("create")),
			browsertest.WaitJS(`document.getElementById("signin-form").hidden && !document.getElementById("signed-in").hidden`),
		)
	}
}

// holdsOrderUnderPointer: with the pointer over the feed, a like's fold
// that moves a post to the top does not reorder the posts under it; the
// feed takes the new order once the pointer leaves. The post is then
// unliked again.
func holdsOrderUnderPointer(t *testing.T, ctx context.Context, emulator string, post func(p, sel string) string) {
	t.Helper()
	first := `document.querySelector("#posts article").dataset.id`
	box, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`(() => { const h = document.querySelector("#posts article:last-child h2"); h.scrollIntoView({ block: "center" }); const r = h.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()`))
	if err != nil || len(box) != 2 {
		t.Fatalf("the last post's place: %v %v", box, err)
	}
	err = chromedp.Do(ctx,
		browsertest.WaitJS(first+` === "offline"`),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, box[0], box[1]),
		browsertest.WaitJS(`document.getElementById("posts").matches(":hover")`),
		browsertest.ClickJS(post("counts", ".like")),
	)
	if err != nil {
		t.Fatalf("like a post with the pointer over the feed: %v", err)
	}
	waitField(t, emulator, "posts/counts", "likes", 1)
	if err := chromedp.Do(ctx, browsertest.WaitJS(`document.getElementById("posts").dataset.held === "true"`)); err != nil {
		t.Fatalf("the new order was not held: %v", err)
	}
	if got, _ := chromedp.Run(ctx, chromedp.Evaluate[string](first)); got != "offline" {
		t.Errorf("with the pointer over the feed, the first post became %q; want the order held", got)
	}
	err = chromedp.Do(ctx,
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, 1, 1),
		browsertest.WaitJS(first+` === "counts" && !document.getElementById("posts").dataset.held`),
		browsertest.ClickJS(post("counts", ".like")),
	)
	if err != nil {
		t.Fatalf("once the pointer left, the liked post should lead: %v", err)
	}
}
