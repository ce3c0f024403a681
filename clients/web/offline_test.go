package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/tallycounters/tally/internal/browsertest"
	"github.com/tallycounters/tally/internal/emulatortest"
	"github.com/tallycounters/tally/internal/stack"
)

// What the flaky link between the page and Increment does.
const (
	linkUp    = iota
	linkDown  // every connection is dropped before its request reaches Increment
	linkLossy // requests reach Increment, which commits, and the answers are lost
)

// flakyLink proxies to target, as mode says, and counts in lost the
// requests whose answers it dropped, in posts every POST it was sent.
func flakyLink(t *testing.T, target string, mode, lost, posts *atomic.Int32) string {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m := mode.Load()
		if r.Method == http.MethodPost {
			posts.Add(1)
		}
		if m == linkLossy && r.Method == http.MethodPost {
			rec := httptest.NewRecorder()
			proxy.ServeHTTP(rec, r) // Increment answers; the answer is dropped
			lost.Add(1)
		}
		if m != linkUp && !(m == linkLossy && r.Method == http.MethodOptions) {
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				conn.Close()
			}
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestOfflineReloadAndTabs presses a like while Increment cannot be
// reached: the number shows it at once, in a second tab too, and after a
// reload; then the requests reach Increment but their answers are lost, and
// the client sends them again with their keys; once the link is back, each
// press is counted once, and no tab ever showed more, or dipped. Then the
// browser goes offline: a press shows at once, is sent only once the
// browser is back online, and is counted once.
func TestOfflineReloadAndTabs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bundle(t, dir)
	s := startLocal(t)
	var mode, lost, posts atomic.Int32
	id := emulatortest.ID(t)
	page := servePage(t, dir, map[string]any{"project": stack.DefaultProject, "firestore": s.EmulatorHost,
		"url": flakyLink(t, s.FunctionsURL, &mode, &lost, &posts) + "/Increment", "counter": id})
	tabA := browsertest.New(t, 3*time.Minute)
	if err := chromedp.Do(tabA, chromedp.Navigate(page), waitText("total", "0")); err != nil {
		t.Fatal(err)
	}
	mode.Store(linkDown)
	for want := range []int{1, 2} {
		after, err := chromedp.Run(tabA, chromedp.Evaluate[string](`document.getElementById("like").click(), document.getElementById("total").textContent`))
		if err != nil || after != fmt.Sprint(want+1) {
			t.Fatalf("press %d while Increment is unreachable: the number is %q (%v), want %d at once", want+1, after, err, want+1)
		}
	}
	tabB, cancelB := chromedp.NewContext(tabA)
	defer cancelB()
	if err := chromedp.Do(tabB, chromedp.Navigate(page), waitText("total", "2")); err != nil {
		t.Fatalf("a second tab does not show the pending likes: %v", err)
	}
	if err := chromedp.Do(tabA, chromedp.Reload(), waitText("total", "2")); err != nil {
		t.Fatalf("after a reload the pending likes are not shown: %v", err)
	}
	mode.Store(linkLossy)
	// The retries reach Increment and commit; their answers are lost.
	for deadline := time.Now().Add(time.Minute); lost.Load() < 2 && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond) // a liveness bound, not a measurement
	}
	if lost.Load() < 2 {
		t.Fatalf("%d answers were lost; want the retries of both presses to reach Increment", lost.Load())
	}
	mode.Store(linkUp)
	waitTotal(t, s, id, 2)
	time.Sleep(1500 * time.Millisecond) // a fold window and more: a press counted twice would show now
	checkRise(t, map[string]context.Context{"first tab": tabA, "second tab": tabB}, 2)

	// The browser goes offline: a press shows at once, nothing is sent, and
	// once it is back online the press is sent and counted once.
	offline := func(off bool) {
		if _, err := chromedp.Call(tabA, network.Enable, network.EnableParams{}); err != nil {
			t.Fatal(err)
		}
		rules := []*network.Conditions{{Offline: off}}
		if _, err := chromedp.Call(tabA, emulateByRule, byRule{Offline: off, MatchedNetworkConditions: rules}); err != nil {
			t.Fatal(err)
		}
		if _, err := chromedp.Call(tabA, network.OverrideNetworkState, network.OverrideNetworkStateParams{Offline: off, DownloadThroughput: -1, UploadThroughput: -1}); err != nil {
			t.Fatal(err)
		}
	}
	offline(true)
	sent := posts.Load()
	after, err := chromedp.Run(tabA, chromedp.Evaluate[string](`navigator.onLine + " " + (document.getElementById("like").click(), document.getElementById("total").textContent)`))
	if err != nil || after != "false 3" {
		t.Fatalf("a press with the browser offline: the page shows %q (%v), want offline and 3 at once", after, err)
	}
	time.Sleep(time.Second)
	if n := posts.Load() - sent; n != 0 {
		t.Errorf("the browser is offline, yet %d requests reached Increment", n)
	}
	offline(false)
	waitTotal(t, s, id, 3)
	time.Sleep(1500 * time.Millisecond) // a fold window and more: a press counted twice would show now
	checkRise(t, map[string]context.Context{"first tab": tabA, "second tab": tabB}, 3)
}

// checkRise checks that each tab's number only rose, to last, and never
// went past it.
func checkRise(t *testing.T, tabs map[string]context.Context, last int64) {
	t.Helper()
	for name, tab := range tabs {
		shown, err := chromedp.Run(tab, chromedp.Evaluate[[]shownAt](`window.shown`))
		if err != nil {
			t.Fatal(err)
		}
		ns := make([]int64, len(shown))
		for i, s := range shown {
			ns[i] = s.N
		}
		if len(ns) == 0 || !slices.IsSorted(ns) || ns[len(ns)-1] != last || slices.Max(ns) != last {
			t.Errorf("the %s showed %v; want it to rise to %d, never past it, never dipping", name, ns, last)
		}
	}
}

// byRule are the parameters of Network.emulateNetworkConditionsByRule as
// this Chromium takes them: offline is a parameter of its own.
type byRule struct {
	Offline                  bool                  `json:"offline"`
	MatchedNetworkConditions []*network.Conditions `json:"matchedNetworkConditions"`
}

var emulateByRule = cdp.Command[byRule, network.EmulateNetworkConditionsByRuleResult]{Method: network.CommandEmulateNetworkConditionsByRule}
