package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"cloud.google.com/go/firestore"
	"github.com/chromedp/chromedp"

	"github.com/tallycounters/tally/internal/testkit/browsertest"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/tools/npmci"
	"github.com/tallycounters/tally/internal/tools/stack"
	"github.com/tallycounters/tally/setup"
)

// bundle builds the browser tests' page with esbuild, the client and the
// Firebase SDK in one script, into dir. The tests that use it need the
// emulator too, so -short leaves them out here, before npm is run.
func bundle(t *testing.T, dir string) {
	t.Helper()
	emulatortest.Require(t)
	if _, err := npmci.Install(context.Background(), ".", filepath.Join(".bin", "esbuild"), "the web client's build tools", os.Stderr); err != nil {
		t.Fatalf("%v (%s)", err, nodeHelp)
	}
	out, err := exec.Command(filepath.Join("node_modules", ".bin", "esbuild"), "e2e/page.js", "--bundle",
		"--format=esm", "--outfile="+filepath.Join(dir, "page.js"), "--log-level=warning").CombinedOutput()
	if err != nil {
		t.Fatalf("esbuild: %v\n%s", err, out)
	}
}

// startLocal runs tally on the emulator, as tally serve does, with browsers
// allowed to call Increment from any origin, configured by env besides.
func startLocal(t *testing.T, env ...string) *stack.Stack {
	t.Helper()
	return startWith(t, stack.Options{}, env...)
}

// startWith is startLocal with options o (its Config and Emulator filled
// in).
func startWith(t *testing.T, o stack.Options, env ...string) *stack.Stack {
	t.Helper()
	paths := emulatortest.RequirePaths(t)
	vars := map[string]string{setup.EnvCORSOrigins: "*", setup.EnvAutoGrow: "false"}
	for i := 0; i+1 < len(env); i += 2 {
		vars[env[i]] = env[i+1]
	}
	cfg, err := setup.ConfigFromEnv(func(k string) string { return vars[k] })
	if err != nil {
		t.Fatal(err)
	}
	o.Config, o.Emulator = cfg, paths
	s, err := stack.Start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		s.Stop(ctx)
	})
	return s
}

// servePage serves the bundled page in dir with its configuration.
func servePage(t *testing.T, dir string, config map[string]any) string {
	t.Helper()
	cfg, _ := json.Marshal(config)
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><meta charset="utf-8"><title>tally</title>
<script type="application/json" id="config">%s</script>
<button id="like">Like</button> <span id="total"></span> <p id="message"></p>
<script type="module" src="/page.js"></script>`, cfg)
	})
	mux.Handle("/page.js", http.FileServer(http.Dir(dir)))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

type shownAt struct {
	N  int64   `json:"n"`
	At float64 `json:"at"`
}

// TestLikesShowAtOnceAndExactly presses a counter's button in a headless
// Chromium, against the emulator and tally's functions: every press shows
// in the number before anything is sent, the number never shows a press
// twice nor dips as the folds come, and it ends at the presses, as does the
// counter's total.
func TestLikesShowAtOnceAndExactly(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bundle(t, dir)
	s := startLocal(t)
	id := emulatortest.ID(t)
	var seen answers
	page := servePage(t, dir, map[string]any{"project": stack.DefaultProject, "firestore": s.EmulatorHost,
		"url": seen.serve(t, s.FunctionsURL) + "/Increment", "counter": id})
	ctx := browsertest.New(t, 3*time.Minute)
	if err := chromedp.Do(ctx, chromedp.Navigate(page), browsertest.WaitText("total", "0")); err != nil {
		t.Fatal(err)
	}
	const presses = 50
	var sync []string // the number right after each press, in the same task as the press
	for i := range presses {
		after, err := chromedp.Run(ctx,
			chromedp.Evaluate[string](`document.getElementById("like").click(), document.getElementById("total").textContent`))
		if err != nil {
			t.Fatal(err)
		}
		sync = append(sync, after)
		time.Sleep(time.Duration(i%4) * 150 * time.Millisecond) // some presses between folds, some within one
	}
	if err := chromedp.Do(ctx, browsertest.WaitText("total", fmt.Sprint(presses))); err != nil {
		t.Fatal(err)
	}
	waitTotal(t, s, id, presses)
	time.Sleep(1500 * time.Millisecond) // a fold window and more: a press counted twice would show now
	shown, err := chromedp.Run(ctx, chromedp.Evaluate[[]shownAt](`window.shown`))
	if err != nil {
		t.Fatal(err)
	}
	pressedAt, _ := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`window.presses`))
	failures, _ := chromedp.Run(ctx, chromedp.Evaluate[[]string](`window.failures`))
	for i, got := range sync {
		if got != fmt.Sprint(i+1) {
			t.Errorf("right after press %d the number was %q, want %d: not shown at once", i+1, got, i+1)
		}
	}
	for i := 1; i < len(shown); i++ {
		if shown[i].N < shown[i-1].N {
			t.Errorf("the number dipped from %d to %d", shown[i-1].N, shown[i].N)
		}
	}
	if last := shown[len(shown)-1].N; last != presses || slices.ContainsFunc(shown, func(s shownAt) bool { return s.N > presses }) {
		t.Errorf("the number went through %v; want it to end at %d and never pass it", shown, presses)
	}
	if len(failures) > 0 {
		t.Errorf("actions failed: %v", failures)
	}
	var delays []float64
	for _, p := range pressedAt {
		for _, s := range shown {
			if s.At >= p {
				delays = append(delays, s.At-p)
				break
			}
		}
	}
	slices.Sort(delays)
	t.Logf("press to the number changing, over %d presses: p50 %.2f ms, p99 %.2f ms", len(delays), delays[len(delays)/2], delays[len(delays)*99/100])
	snapshots, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`window.snapshots`))
	posts, preflights := seen.counts()
	t.Logf("for %d presses: %d POSTs to Increment, %d preflights; the count's listener got %d snapshots (reads)", presses, posts, preflights, snapshots)
	if posts != presses {
		t.Errorf("%d POSTs for %d presses", posts, presses)
	}
}

// waitTotal waits until counter id's total on s is want
// (emulatortest.WaitTotal).
func waitTotal(t *testing.T, s *stack.Stack, id string, want int64) {
	t.Helper()
	emulatortest.WaitTotal(t, emulatortest.ClientAt(t, s.EmulatorHost, stack.DefaultProject), id, want)
}

// newPost makes a post in fs, as the app would: a title, no counts.
func newPost(t *testing.T, fs *firestore.Client) *firestore.DocumentRef {
	t.Helper()
	post := fs.Collection("posts").Doc(emulatortest.ID(t))
	if _, err := post.Create(context.Background(), map[string]any{"title": "hello"}); err != nil {
		t.Fatal(err)
	}
	return post
}
