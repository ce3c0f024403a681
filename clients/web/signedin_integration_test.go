package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/firestore"
	"github.com/chromedp/chromedp"

	"github.com/tallycounters/tally/internal/testkit/appchecktest"
	"github.com/tallycounters/tally/internal/testkit/browsertest"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/tools/authemu"
	"github.com/tallycounters/tally/internal/tools/stack"
	"github.com/tallycounters/tally/setup"
)

// answers proxies to target and keeps the status of every answer to a
// POST, in order, and counts the preflight requests.
type answers struct {
	mu         sync.Mutex
	statuses   []int
	preflights int
}

// counts is how many POSTs and preflights were answered.
func (a *answers) counts() (posts, preflights int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.statuses), a.preflights
}

func (a *answers) serve(t *testing.T, target string) string {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(u)
	proxy.ModifyResponse = func(r *http.Response) error {
		a.mu.Lock()
		defer a.mu.Unlock()
		switch r.Request.Method {
		case http.MethodPost:
			a.statuses = append(a.statuses, r.StatusCode)
		case http.MethodOptions:
			a.preflights++
		}
		return nil
	}
	srv := httptest.NewServer(proxy)
	t.Cleanup(srv.Close)
	return srv.URL
}

func (a *answers) since(n int) []int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.statuses[n:])
}

// TestSignedIn runs the client as a signed-in user of an app with counts on
// its posts (likes by votes, views by steps), sign-in and App Check on, in
// headless Chromium against the Firestore and Auth emulators: a like shows
// at once and is known after a reload from the user's vote document; an
// unlike takes it back; a refused action is undone with a message; an ID
// token past its expiry is refreshed; every request carries the App Check
// token, and one without is refused.
func TestSignedIn(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bundle(t, dir)
	keys := appchecktest.New(t)
	s := startLocal(t, setup.EnvAuth, setup.AuthFirebase, setup.EnvAppCheck, "true", setup.EnvCounts, "posts:likes,views")
	fs := emulatortest.ClientAt(t, s.EmulatorHost, stack.DefaultProject)
	post := fs.Doc("posts/" + emulatortest.ID(t))
	if _, err := post.Create(context.Background(), map[string]any{"title": "Hello", "likes": 0, "views": 0}); err != nil {
		t.Fatal(err)
	}
	user, err := authemu.SignUp(s.AuthHost, "ada@example.com", "secret-password")
	if err != nil {
		t.Fatal(err)
	}
	var seen answers
	base := map[string]any{"project": stack.DefaultProject, "firestore": s.EmulatorHost, "auth": s.AuthHost,
		"url": seen.serve(t, s.FunctionsURL) + "/Increment", "email": user.Email, "password": "secret-password",
		"appCheckToken": keys.Token(t, keys.Key, stack.DefaultProject, nil)}
	with := func(more map[string]any) string {
		cfg := map[string]any{}
		for k, v := range base {
			cfg[k] = v
		}
		for k, v := range more {
			cfg[k] = v
		}
		return servePage(t, dir, cfg)
	}
	ctx := browsertest.New(t, 4*time.Minute)

	t.Run("like, reload, unlike", func(t *testing.T) {
		page := with(map[string]any{"counter": "posts/" + post.ID, "field": "likes", "vote": true})
		pressed := `document.getElementById("like").click(), document.getElementById("total").textContent + " " + document.getElementById("like").ariaPressed`
		if err := chromedp.Do(ctx, chromedp.Navigate(page), browsertest.WaitText("total", "0"), waitAttr("like", "aria-pressed", "false")); err != nil {
			t.Fatal(err)
		}
		if after, err := chromedp.Run(ctx, chromedp.Evaluate[string](pressed)); err != nil || after != "1 true" {
			t.Fatalf("right after Like the page shows %q (%v), want 1 like, pressed", after, err)
		}
		emulatortest.WaitField(t, post, "likes", 1)
		if err := chromedp.Do(ctx, chromedp.Reload(), browsertest.WaitText("total", "1"), waitAttr("like", "aria-pressed", "true")); err != nil {
			t.Fatalf("after a reload the page does not know the user likes the post: %v", err)
		}
		if after, err := chromedp.Run(ctx, chromedp.Evaluate[string](pressed)); err != nil || after != "0 false" {
			t.Fatalf("right after the unlike the page shows %q (%v), want 0 likes, not pressed", after, err)
		}
		emulatortest.WaitField(t, post, "likes", 0)
		time.Sleep(1500 * time.Millisecond) // a fold window and more: a vote counted twice would show now
		checkShown(t, ctx, []int64{0, 1}, 0)
		if _, err := fs.Doc(fmt.Sprintf("posts/%s/lives/%s/voters/likes:%s", post.ID, lifeOf(t, post), user.UID)).Get(context.Background()); err == nil {
			t.Error("the user's vote document is still there after the unlike")
		}
	})

	t.Run("refused actions are undone with a message", func(t *testing.T) {
		for name, cfg := range map[string]map[string]any{
			"a post that does not exist": {"counter": "posts/gone", "field": "views"},
			"no App Check token":         {"counter": "posts/" + post.ID, "field": "views", "appCheckToken": ""},
		} {
			page := with(cfg)
			if err := chromedp.Do(ctx, chromedp.Navigate(page), browsertest.WaitText("total", "0")); err != nil {
				t.Fatal(err)
			}
			if after, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("like").click(), document.getElementById("total").textContent`)); err != nil || after != "1" {
				t.Fatalf("%s: right after the press the page shows %q (%v), want 1", name, after, err)
			}
			if err := chromedp.Do(ctx, browsertest.WaitText("total", "0")); err != nil {
				t.Fatal(err)
			}
			msg, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("message").textContent`))
			if msg == "" {
				t.Errorf("%s: refused without a message", name)
			}
			t.Logf("%s: undone, with the message %q", name, msg)
		}
		if snap, err := post.Get(context.Background()); err != nil || snap.Data()["views"] != int64(0) {
			t.Errorf("a refused action was counted: %v %v", snap.Data(), err)
		}
	})

	t.Run("an ID token past its expiry is refreshed", func(t *testing.T) {
		page := with(map[string]any{"counter": "posts/" + post.ID, "field": "views"})
		if err := chromedp.Do(ctx, chromedp.Navigate(page), browsertest.WaitText("total", "0")); err != nil {
			t.Fatal(err)
		}
		for i, how := range []struct{ name, js string }{
			// The SDK believes the token good: Increment refuses it, and the client asks for a new one.
			{"a token the SDK takes for good", `u.stsTokenManager.accessToken = expired`},
			// The SDK knows it expired: it gets a new one as the client asks for the token.
			{"a token the SDK knows expired", `u.stsTokenManager.accessToken = expired, u.stsTokenManager.expirationTime = Date.now() - 1000`},
		} {
			n := len(seen.since(0))
			if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](expireToken+how.js+`; document.getElementById("like").click(); return true; })()`, chromedp.EvalAwaitPromise)); err != nil {
				t.Fatal(err)
			}
			emulatortest.WaitField(t, post, "views", int64(i+1))
			got := seen.since(n)
			t.Logf("%s: Increment answered %v", how.name, got)
			if got[len(got)-1] != http.StatusOK || (i == 0 && !slices.Equal(got, []int{401, 200})) {
				t.Errorf("%s: Increment answered %v", how.name, got)
			}
		}
		failures, _ := chromedp.Run(ctx, chromedp.Evaluate[[]string](`window.failures`))
		if len(failures) > 0 {
			t.Errorf("actions failed: %v", failures)
		}
		time.Sleep(1500 * time.Millisecond)
		checkShown(t, ctx, []int64{0, 1, 2}, 2)
	})
}

// expireToken opens a script, with u the signed-in user and expired their
// ID token with its times moved two hours back.
const expireToken = `(async () => {
  const u = window.auth.currentUser;
  const parts = (await u.getIdToken()).split(".");
  const claims = JSON.parse(atob(parts[1].replace(/-/g, "+").replace(/_/g, "/")));
  const now = Math.floor(Date.now() / 1000);
  Object.assign(claims, { iat: now - 7200, auth_time: now - 7200, exp: now - 3600 });
  parts[1] = btoa(JSON.stringify(claims)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  const expired = parts.join(".");
  `

// checkShown checks that the numbers the page showed rose and fell only
// through want, without repeats, and ended at last.
func checkShown(t *testing.T, ctx context.Context, want []int64, last int64) {
	t.Helper()
	shown, err := chromedp.Run(ctx, chromedp.Evaluate[[]shownAt](`window.shown`))
	if err != nil {
		t.Fatal(err)
	}
	ns := make([]int64, len(shown))
	for i, s := range shown {
		ns[i] = s.N
	}
	for i, n := range ns {
		if !slices.Contains(want, n) || (i > 0 && n == ns[i-1]) {
			t.Errorf("the page showed %v; want only %v, never one twice in a row", ns, want)
			break
		}
	}
	if len(ns) == 0 || ns[len(ns)-1] != last {
		t.Errorf("the page showed %v; want it to end at %d", ns, last)
	}
}

// waitAttr waits until the attribute of the element with this id is want.
func waitAttr(id, attr, want string) chromedp.Action[chromedp.Void] {
	return browsertest.WaitJS(fmt.Sprintf(`document.getElementById(%q)?.getAttribute(%q) === %q`, id, attr, strings.ToLower(want)))
}

// lifeOf is the life of the post, under which its votes are.
func lifeOf(t *testing.T, post *firestore.DocumentRef) string {
	t.Helper()
	snap, err := post.Get(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return strconv.FormatInt(snap.CreateTime.UnixMicro(), 10)
}
