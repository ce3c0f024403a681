package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/tallycounters/tally/internal/testkit/browsertest"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
)

// starterDir is the starter app: a page on the web client, run against
// serve with npm start.
var starterDir = filepath.Join("..", "..", "examples", "like-button")

// TestStarterApp installs and builds the starter app as its README says
// (npm ci, then what npm start runs: its build, then serve --app public
// with sign-in on), and drives it in headless Chromium: signed out, the
// button says to sign in; signed in, a press shows the like at once and
// counts it once on the shards; a second press takes it back.
func TestStarterApp(t *testing.T) {
	t.Parallel()
	var pkg struct{ Scripts map[string]string }
	b, err := os.ReadFile(filepath.Join(starterDir, "package.json"))
	if err != nil || json.Unmarshal(b, &pkg) != nil {
		t.Fatalf("the starter's package.json: %v", err)
	}
	const serveArgs = "TALLY_AUTH=firebase TALLY_COUNTS='posts:likes=count(likes)' go run ../../cmd/tally serve --app public --rules firestore.rules"
	if want := "npm run build && " + serveArgs; pkg.Scripts["start"] != want {
		t.Fatalf("npm start runs %q; this test runs %q", pkg.Scripts["start"], want)
	}
	for _, step := range [][]string{{"ci", "--no-audit", "--no-fund"}, {"run", "build"}} {
		emulatortest.Without(t, "npm and Chromium")
		cmd := exec.Command("npm", step...)
		cmd.Dir = starterDir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("npm %s in %s: %v\n%s", strings.Join(step, " "), starterDir, err, out)
		}
	}
	cmd, out, stderr := start(t, []string{"TALLY_AUTH=firebase", "TALLY_COUNTS=posts:likes=count(likes)"},
		"serve", "--port", "0", "--app", filepath.Join(starterDir, "public"), "--rules", filepath.Join(starterDir, "firestore.rules"))
	r := waitReady(t, out, stderr)
	if !strings.Contains(strings.Join(r.lines, "\n"), "tally: your app, from ") {
		t.Errorf("serve does not say where the app is:\n%s", strings.Join(r.lines, "\n"))
	}
	ctx := browsertest.New(t, 3*time.Minute)
	const post = "posts/hello" // examples/like-button/src/config.js
	err = chromedp.Do(ctx,
		chromedp.Navigate(r.functions+"/"),
		browsertest.WaitJS(`document.getElementById("like").disabled && document.getElementById("like").textContent === "Sign in to like"`),
		chromedp.SendKeys(chromedp.ID("email"), "ada@example.com"),
		chromedp.SendKeys(chromedp.ID("password"), "secret-password"),
		// Signing in never makes an account: refused in plain words.
		chromedp.Click(`#signin button[name="signin"]`),
		browsertest.WaitJS(`document.getElementById("message").textContent.includes("do not match an account")`),
		chromedp.Click(`#signin button[name="create"]`),
		browsertest.WaitJS(`!document.getElementById("like").disabled`),
		chromedp.Click(chromedp.ID("like")),
		browsertest.WaitText("count", "1"), // at once
		browsertest.WaitText("noun", "like"),
		browsertest.WaitText("like", "Liked"),
	)
	if err != nil {
		t.Fatalf("sign in and like: %v\n%s", err, stderr)
	}
	// The like is the user's own document, which the post's likes count.
	waitField(t, r.emulator, post, "likes", 1)
	if likes := likeDocs(t, r.emulator, post); len(likes) != 1 {
		t.Errorf("the post has like documents %v; want the user's one", likes)
	}
	err = chromedp.Do(ctx, chromedp.Click(chromedp.ID("like")), browsertest.WaitText("count", "0"), browsertest.WaitText("like", "Like"))
	if err != nil {
		t.Fatalf("press again: %v", err)
	}
	waitField(t, r.emulator, post, "likes", 0)
	if likes := likeDocs(t, r.emulator, post); len(likes) != 0 {
		t.Errorf("the post has like documents %v after the like was taken back; want none", likes)
	}
	// A wrong password is answered as one, and the right one signs in.
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.ID("signout")),
		browsertest.WaitJS(`!document.getElementById("signin").hidden`),
		chromedp.SetValue(chromedp.ID("password"), "not-the-password"),
		chromedp.Click(`#signin button[name="signin"]`),
		// an error stands out from what is only said, and is read out
		browsertest.WaitJS(`document.getElementById("message").textContent.includes("do not match an account") && `+
			`document.getElementById("message").dataset.kind === "error" && document.getElementById("message").getAttribute("role") === "alert" && `+
			`getComputedStyle(document.getElementById("message")).backgroundColor !== "rgba(0, 0, 0, 0)"`),
		// the local Auth emulator sends no email: the page says where the link is
		chromedp.Click(`#signin button[name="reset"]`),
		browsertest.WaitJS(`document.getElementById("message").textContent.includes("sends no email") && `+
			`document.getElementById("message").textContent.includes("/emulator/v1/projects/") && document.getElementById("message").dataset.kind === "info"`),
		chromedp.SetValue(chromedp.ID("password"), "secret-password"),
		chromedp.Click(`#signin button[name="signin"]`),
		browsertest.WaitJS(`!document.getElementById("like").disabled`),
	)
	if err != nil {
		t.Fatalf("sign out, a wrong password, then the right one: %v", err)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if code := waitExit(t, cmd); code != 0 {
		t.Errorf("serve exited %d: %s", code, stderr)
	}
}

// likeDocs lists the like documents of the post at path.
func likeDocs(t *testing.T, emulator, path string) []string {
	t.Helper()
	refs, err := serveClient(t, emulator).Doc(path).Collection("likes").DocumentRefs(context.Background()).GetAll()
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range refs {
		ids = append(ids, r.ID)
	}
	return ids
}
