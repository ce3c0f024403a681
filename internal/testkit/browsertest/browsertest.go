// Package browsertest gives tests a headless Chromium, driven with
// chromedp, that stops with the test: the demo page's and the web client's
// tests run in it.
package browsertest

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/tools/proc"
)

// Path finds the browser, or fails the test saying how to install it.
func Path(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("TALLY_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("this test drives a headless Chromium: apt-get install chromium (or set TALLY_CHROMIUM)")
	return ""
}

// minLimit is the least bound New gives a browser's whole run.
const minLimit = 10 * time.Minute

// New starts a headless Chromium with an empty profile, and no network of
// its own beyond the pages it is sent to, for at most limit (a liveness
// bound, raised to minLimit: the waits in it end when the page is ready,
// and only a hang should reach it, however slow the machine); it stops
// when the test ends, and dies with the test process.
func New(t testing.TB, limit time.Duration) context.Context {
	t.Helper()
	limit = max(limit, minLimit)
	emulatortest.Without(t, "Chromium")
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(Path(t)), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.ModifyCmdFunc(proc.Prepare),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	tab, cancel := chromedp.NewContext(actx)
	console := record(tab)
	ctx, cancelTime := context.WithTimeout(tab, limit)
	t.Cleanup(func() {
		if t.Failed() {
			report(t, tab, console)
		}
		cancelTime()
		cancel()
		cancelAlloc()
	})
	return ctx
}

// messages are what a tab wrote to its console.
type messages struct {
	mu   sync.Mutex
	seen []string
}

// record keeps what the first tab of ctx writes to its console (starting
// the browser), so that a failed test shows it.
func record(ctx context.Context) *messages {
	m := &messages{}
	it := chromedp.Console(ctx)
	go func() {
		for msg, err := range it {
			if err != nil {
				return
			}
			m.mu.Lock()
			m.seen = append(m.seen, msg.String())
			m.mu.Unlock()
		}
	}()
	return m
}

// report logs what the page of the failed test's first tab shows, and what
// it wrote to its console.
func report(t testing.TB, tab context.Context, console *messages) {
	ctx, cancel := context.WithTimeout(tab, 5*time.Second)
	defer cancel()
	text, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href + "\n" + (document.body?.innerText ?? "")`))
	if err != nil {
		text = "(unread: " + err.Error() + ")"
	}
	console.mu.Lock()
	defer console.mu.Unlock()
	t.Logf("the page, as the test failed: %s\nits console:\n%s", text, strings.Join(console.seen, "\n"))
}
