// Package browsertest gives tests a headless Chromium, driven with
// chromedp, that stops with the test: the demo page's and the web client's
// tests run in it.
package browsertest

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/tallycounters/tally/internal/proc"
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

// New starts a headless Chromium with an empty profile, and no network of
// its own beyond the pages it is sent to, for at most limit (a liveness
// bound); it stops when the test ends, and dies with the test process.
func New(t testing.TB, limit time.Duration) context.Context {
	t.Helper()
	if testing.Short() {
		t.Skip("needs Chromium: left out by -short")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(Path(t)), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.ModifyCmdFunc(proc.Prepare),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	ctx, cancelTime := context.WithTimeout(ctx, limit)
	t.Cleanup(func() { cancelTime(); cancel(); cancelAlloc() })
	return ctx
}
