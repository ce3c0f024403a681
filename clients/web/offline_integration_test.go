package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/tallycounters/tally/internal/testkit/browsertest"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/tools/stack"
)

// What the flaky link between the page and Increment does.
const (
	linkUp    = iota
	linkDown  // every connection is dropped before its request reaches Increment
	linkLossy // requests reach Increment, which commits, and the answers are lost
)

// link is a flaky link between the page and Increment.
type link struct {
	mode atomic.Int32 // linkUp, linkDown or linkLossy
	lost atomic.Int32 // the requests whose answers it dropped

	mu   sync.Mutex
	keys []string // the Idempotency-Key of every POST it was sent, in order
}

// sent returns the keys of the POSTs the link was sent.
func (l *link) sent() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.keys)
}

// flakyLink proxies to target as the link's mode says.
func flakyLink(t *testing.T, target string, l *link) string {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m := l.mode.Load()
		if r.Method == http.MethodPost {
			l.mu.Lock()
			l.keys = append(l.keys, r.Header.Get("Idempotency-Key"))
			l.mu.Unlock()
		}
		if m == linkLossy && r.Method == http.MethodPost {
			rec := httptest.NewRecorder()
			proxy.ServeHTTP(rec, r) // Increment answers; the answer is dropped
			l.lost.Add(1)
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
	var l link
	id := emulatortest.ID(t)
	page := servePage(t, dir, map[string]any{"project": stack.DefaultProject, "firestore": s.EmulatorHost,
		"url": flakyLink(t, s.FunctionsURL, &l) + "/Increment", "counter": id})
	tabA := browsertest.New(t, 3*time.Minute)
	if err := chromedp.Do(tabA, chromedp.Navigate(page), browsertest.WaitText("total", "0")); err != nil {
		t.Fatal(err)
	}
	l.mode.Store(linkDown)
	for want := range []int{1, 2} {
		after, err := chromedp.Run(tabA, chromedp.Evaluate[string](`document.getElementById("like").click(), document.getElementById("total").textContent`))
		if err != nil || after != fmt.Sprint(want+1) {
			t.Fatalf("press %d while Increment is unreachable: the number is %q (%v), want %d at once", want+1, after, err, want+1)
		}
	}
	tabB, cancelB := chromedp.NewContext(tabA)
	defer cancelB()
	if err := chromedp.Do(tabB, chromedp.Navigate(page), browsertest.WaitText("total", "2")); err != nil {
		t.Fatalf("a second tab does not show the pending likes: %v", err)
	}
	if err := chromedp.Do(tabA, chromedp.Reload(), browsertest.WaitText("total", "2")); err != nil {
		t.Fatalf("after a reload the pending likes are not shown: %v", err)
	}
	l.mode.Store(linkLossy)
	// The retries reach Increment and commit; their answers are lost.
	for deadline := time.Now().Add(emulatortest.Liveness); l.lost.Load() < 2 && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond) // a liveness bound, not a measurement
	}
	if l.lost.Load() < 2 {
		t.Fatalf("%d answers were lost; want the retries of both presses to reach Increment", l.lost.Load())
	}
	l.mode.Store(linkUp)
	waitTotal(t, s, id, 2)
	time.Sleep(1500 * time.Millisecond) // a fold window and more: a press counted twice would show now
	checkRise(t, map[string]context.Context{"first tab": tabA, "second tab": tabB}, 2)

	// The browser goes offline, every tab of it: a press shows at once,
	// nothing is sent, and once it is back online the press is sent and
	// counted once. (The earlier presses may still be retried until their
	// answers are in: those are not the new press.)
	offline := func(off bool) {
		for _, tab := range []context.Context{tabA, tabB} {
			browsertest.SetOffline(t, tab, off)
		}
	}
	offline(true)
	before := len(l.sent())
	after, err := chromedp.Run(tabA, chromedp.Evaluate[string](`navigator.onLine + " " + (document.getElementById("like").click(), document.getElementById("total").textContent)`))
	if err != nil || after != "false 3" {
		t.Fatalf("a press with the browser offline: the page shows %q (%v), want offline and 3 at once", after, err)
	}
	time.Sleep(time.Second)
	if n := len(newKeys(l.sent(), before)); n != 0 {
		t.Errorf("the browser is offline, yet the new press reached Increment %d times", n)
	}
	offline(false)
	waitTotal(t, s, id, 3)
	time.Sleep(1500 * time.Millisecond) // a fold window and more: a press counted twice would show now
	checkRise(t, map[string]context.Context{"first tab": tabA, "second tab": tabB}, 3)
}

// newKeys returns the keys first sent after the first n POSTs.
func newKeys(keys []string, n int) []string {
	var fresh []string
	for _, k := range keys[n:] {
		if !slices.Contains(keys[:n], k) && !slices.Contains(fresh, k) {
			fresh = append(fresh, k)
		}
	}
	return fresh
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
