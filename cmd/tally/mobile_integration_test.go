package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/testkit/testio"
	"github.com/tallycounters/tally/internal/tools/npmci"
	"github.com/tallycounters/tally/internal/tools/stack"
)

// TestMobileRecipeOnServe runs docs/mobile.md as the page says: the
// serve binary, started with the page's command line (its environment,
// its flags and --rules app.rules, the page's rules file; the ports free
// ones, as a test must), and the page's app, the Firebase JS SDK standing
// in for the phone's: a like as a document, a comment, views once an hour
// with an Idempotency-Key, one listener seeing every count, the feed by
// views today and by trend.
func TestMobileRecipeOnServe(t *testing.T) {
	t.Parallel()
	emulatortest.Without(t, "Node.js")
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("the mobile recipe's test needs Node.js 20 or later and npm: docs/prerequisites.md says how, by system")
	}
	web := filepath.Join("..", "..", "clients", "web")
	if _, err := npmci.Install(context.Background(), web, filepath.Join("firebase", "package.json"), "the web client's build tools", os.Stderr); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join("..", "..", "docs", "mobile.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(page)
	env, args := pageCommand(t, doc)
	dir := t.TempDir()
	rules := regexp.MustCompile("(?s)<!-- mobile test: rules -->\n```\n(.*?)```").FindStringSubmatch(doc)
	if rules == nil {
		t.Fatal("docs/mobile.md has no rules block")
	}
	if err := os.WriteFile(filepath.Join(dir, "app.rules"), []byte(rules[1]), 0o644); err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(args); i++ {
		if strings.HasSuffix(args[i-1], "-port") {
			args[i] = strconv.Itoa(freePort(t)) // the page's, moved to one free now
		}
	}
	cmd, out, stderr := startIn(t, dir, env, args...)
	r := waitReady(t, out, stderr)
	auth := regexp.MustCompile(`Firebase Auth emulator at (\S+):`).FindStringSubmatch(strings.Join(r.lines, "\n"))
	if auth == nil || !strings.Contains(strings.Join(r.lines, "\n"), "your app.rules with tally's merged in") {
		t.Fatalf("serve's banner names no Auth emulator, or not the app's rules:\n%s", strings.Join(r.lines, "\n"))
	}
	fs := serveClient(t, r.emulator)
	ctx := context.Background()
	post, other := "posts/"+emulatortest.ID(t), "posts/other-"+emulatortest.ID(t)
	for _, p := range []string{post, other} {
		if _, err := fs.Doc(p).Create(ctx, map[string]any{"title": "hello"}); err != nil {
			t.Fatal(err)
		}
	}
	saw := runMobile(t, node, web, map[string]string{"project": stack.DefaultProject, "firestore": r.emulator, "auth": auth[1],
		"url": r.functions + "/Increment", "post": post, "other": other})
	if want := map[string]int{"likes": 1, "comments": 1, "views": 2, "viewsToday": 2}; !reflect.DeepEqual(saw.Counts, want) {
		t.Errorf("the app's listener saw %v; want %v", saw.Counts, want)
	}
	if saw.First["changed"] != true || !reflect.DeepEqual(saw.First, saw.Retried) || saw.Again["changed"] != false {
		t.Errorf("views: first %v, its retry %v, another within the hour %v; want counted, answered the same, and not counted", saw.First, saw.Retried, saw.Again)
	}
	// first, before the demo's posts serve made in an empty posts, which
	// no one viewed
	first := func(ids []string) string { return strings.Join(ids[:min(2, len(ids))], ",") }
	want := post[len("posts/"):] + "," + other[len("posts/"):]
	if first(saw.ByToday) != want || first(saw.ByHot) != want {
		t.Errorf("the feed by views today %v, by trend %v; want the post, then the other, first", saw.ByToday, saw.ByHot)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	waitExit(t, cmd)
}

// pageCommand is the environment and the arguments of docs/mobile.md's
// serve command line.
func pageCommand(t *testing.T, doc string) (env, args []string) {
	t.Helper()
	line := ""
	sc := bufio.NewScanner(strings.NewReader(doc))
	for sc.Scan() {
		if l := sc.Text(); strings.HasPrefix(l, "TALLY_AUTH=") && strings.Contains(l, "go run ./cmd/tally serve") {
			line = l
		}
	}
	before, after, ok := strings.Cut(line, "go run ./cmd/tally ")
	if !ok {
		t.Fatal("docs/mobile.md has no serve command line")
	}
	for _, m := range regexp.MustCompile(`(\w+)=('[^']*'|\S+)`).FindAllStringSubmatch(before, -1) {
		env = append(env, m[1]+"="+strings.Trim(m[2], "'"))
	}
	return env, strings.Fields(after)
}

// mobileSaw is what docs/mobile.md's app saw.
type mobileSaw struct {
	First, Retried, Again map[string]any
	Counts                map[string]int
	ByToday, ByHot        []string
}

// runMobile runs the page's app (clients/web/e2e/mobile.mjs) with cfg.
func runMobile(t *testing.T, node, web string, cfg map[string]string) mobileSaw {
	t.Helper()
	b, _ := json.Marshal(cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(web, "e2e", "mobile.mjs"))
	cmd.Env = append(os.Environ(), "MOBILE_CONFIG="+string(b))
	stderr := &testio.Buffer{}
	cmd.Stderr = stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the app: %v\n%s%s", err, out, stderr)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	var saw mobileSaw
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &saw); err != nil {
		t.Fatalf("the app said %q: %v", out, err)
	}
	return saw
}
