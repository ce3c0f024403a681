package web_test

import (
	"bytes"
	"net/http"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/tallycounters/tally/internal/testkit/browsertest"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/tools/stack"
)

// TestCloseTally closes the page's client after three presses: its
// IndexedDB connection is closed, an action on it is refused as closed,
// getTally makes a new client and returns that one after, and the closed
// client's count listener hears nothing more: when the new client shows an
// increment made elsewhere, the old count still shows the three presses.
func TestCloseTally(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bundle(t, dir)
	s := startLocal(t)
	id := emulatortest.ID(t)
	page := servePage(t, dir, map[string]any{"project": stack.DefaultProject, "firestore": s.EmulatorHost,
		"url": s.FunctionsURL + "/Increment", "counter": id})
	ctx := browsertest.New(t, 2*time.Minute)
	if err := chromedp.Do(ctx, chromedp.Navigate(page), browsertest.WaitText("total", "0")); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[any](`document.getElementById("like").click()`)); err != nil {
			t.Fatal(err)
		}
	}
	if err := chromedp.Do(ctx, browsertest.WaitText("total", "3")); err != nil {
		t.Fatal(err)
	}
	waitTotal(t, s, id, 3)
	type closed struct {
		Blocked bool   `json:"blocked"`
		Refused string `json:"refused"`
		Fresh   bool   `json:"fresh"`
		Same    bool   `json:"same"`
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[closed](`window.teardown()`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	if want := (closed{Refused: "tally/closed", Fresh: true, Same: true}); got != want {
		t.Errorf("closing: %+v, want %+v", got, want)
	}
	res, err := http.Post(s.FunctionsURL+"/Increment", "application/json", bytes.NewReader([]byte(`{"counter":"`+id+`","by":2}`)))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("Increment answered %s", res.Status)
	}
	if err := chromedp.Do(ctx, browsertest.WaitText("again", "5")); err != nil {
		t.Fatal(err)
	}
	if old, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("total").textContent`)); err != nil || old != "3" {
		t.Errorf("the closed client's count shows %q (%v), want 3: its listener still runs", old, err)
	}
}
