package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/internal/testkit/emulatortest"
)

// cli runs the command in this process and returns its output and status.
// It reads this process's environment: tests that give the command an
// environment of its own run it as a child, with cliWith.
func cli(args ...string) (string, int) {
	var out bytes.Buffer
	code := run(args, &out, &out)
	return strings.TrimSpace(out.String()), code
}

func TestHelpAndVersion(t *testing.T) {
	t.Parallel()
	out, code := cli("-h")
	for _, want := range []string{"serve", "bench", "reshard", "config", "completion"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("tally -h: exit %d, no %q:\n%s", code, want, out)
		}
	}
	root := newRoot(&bytes.Buffer{}, &bytes.Buffer{})
	for _, c := range root.Commands() {
		name := strings.Fields(c.Use)[0]
		if out, code := cli(name, "-h"); code != 0 || !strings.Contains(out, "Usage:") {
			t.Errorf("tally %s -h: exit %d:\n%s", name, code, out)
		}
		if out, code := cli(name, "--version"); code != 0 || !strings.HasPrefix(out, "tally ") {
			t.Errorf("tally %s --version: exit %d: %s", name, code, out)
		}
	}
	if out, _ := cli("get", "-h"); strings.Contains(out, "cache-ttl") || strings.Contains(out, "--shards ") {
		t.Errorf("get -h lists another command's flags:\n%s", out)
	}
	if out, code := cli("reconsile", "likes"); code != 2 || !strings.Contains(out, "reconcile") {
		t.Errorf("a misspelt command: exit %d, %q; want exit 2 suggesting reconcile", code, out)
	}
	if out, code := cli("get", "--no-such-flag", "likes"); code != 2 || !strings.Contains(out, "no-such-flag") {
		t.Errorf("an unknown flag: exit %d, %q; want exit 2", code, out)
	}
	for _, shell := range []string{"bash", "zsh", "fish"} {
		if out, code := cli("completion", shell); code != 0 || !strings.Contains(out, "tally") {
			t.Errorf("completion %s: exit %d", shell, code)
		}
	}
}

// TestCounterCommands runs a CLI session against an emulator: create, incr,
// sum, reshard, reconcile, get, reset, delete, in text and JSON.
func TestCounterCommands(t *testing.T) {
	t.Parallel()
	host := emulatorHost(t)
	env := []string{"FIRESTORE_EMULATOR_HOST=" + host, "GOOGLE_CLOUD_PROJECT="}
	cli := func(args ...string) (string, int) { return cliWith(t, env, args...) }
	steps := []struct {
		args []string
		want string // the output contains it
		code int
	}{
		{[]string{"create", "likes", "--shards", "4"}, "created likes with 4 shards", 0},
		{[]string{"create", "--shards", "4", "likes"}, "likes exists already: 'tally reshard likes --shards N' changes its shards", 1},
		{[]string{"incr", "likes", "--by", "5"}, "likes +5", 0},
		{[]string{"incr", "--by=-2", "likes"}, "likes -2", 0},
		{[]string{"incr", "likes", "--by", "0"}, "by must not be 0", 2},
		{[]string{"incr", "likes", "--by", "5000"}, "between -1000 and 1000", 2},
		{[]string{"sum", "likes"}, "likes 3", 0},
		{[]string{"get", "likes"}, "likes 0", 0}, // no rollup runs here
		{[]string{"reconcile", "likes"}, "likes: total 0, shards 3, drift -3, repaired", 0},
		{[]string{"get", "--json", "likes"}, `{"counter":"likes","total":3}`, 0},
		{[]string{"reshard", "likes", "--shards", "2", "--cache-ttl", "1ms"}, "likes: 4 -> 2 shards", 0},
		{[]string{"sum", "likes", "--json"}, `{"counter":"likes","sum":3}`, 0},
		{[]string{"reconcile", "--all", "--json"}, `"drift":0`, 0},
		{[]string{"reset", "likes"}, "shards set to 0", 0},
		{[]string{"get", "likes"}, "likes 0", 0},
		{[]string{"delete", "likes"}, "deleted likes", 0},
		{[]string{"get", "likes"}, "there is no counter likes: 'tally create likes' makes one", 1},
		{[]string{"incr", "typo"}, "there is no counter typo: 'tally create typo' makes one", 1},
		{[]string{"sum", "typo"}, "there is no counter typo", 1}, // the incr made nothing
		{[]string{"reset", "typo"}, "tally reset: there is no counter typo: 'tally create typo' makes one", 1},
		{[]string{"delete", "typo"}, "tally delete: there is no counter typo: 'tally create typo' makes one", 1},
		{[]string{"reconcile", "missing2"}, "tally reconcile: there is no counter missing2: 'tally create missing2' makes one", 1},
		{[]string{"incr", "bad/id"}, "invalid counter id", 2},
		{[]string{"get"}, "want one counter id", 2},
		{[]string{"get", "likes", "views"}, `"views": a counter here is counters/{id}, whose one count is its total; give its id alone`, 2},
		{[]string{"reshard", "likes"}, "--shards is required", 2},
		{[]string{"reconcile"}, "give a counter id, or --all", 2},
	}
	for _, s := range steps {
		out, code := cli(s.args...)
		if code != s.code || !strings.Contains(out, s.want) {
			t.Errorf("tally %s: exit %d, %q; want exit %d and %q", strings.Join(s.args, " "), code, out, s.code, s.want)
		}
	}
	if out, _ := cli("reshard", "x", "--shards", "1"); !strings.Contains(out, "there is no counter x") {
		t.Errorf("reshard of a missing counter: %q", out)
	}
	cli("create", "r", "--shards", "3")
	if out, _ := cli("reshard", "r", "--shards", "1", "--cache-ttl", "10ms"); !strings.Contains(out, "waiting 2.01s until every Increment instance has seen num_shards 1") {
		t.Errorf("reshard did not say what it waits for: %q", out)
	}
	out, _ := cli("create", "x", "--json")
	var v map[string]any
	if err := json.Unmarshal([]byte(out), &v); err != nil || v["counter"] != "x" {
		t.Errorf("--json output %q is not the counter as JSON", out)
	}
}

// ownEmulator starts an emulator for the test and returns a client of it
// and a function that runs a command against it (project demo-tally) with
// the variable given set.
func ownEmulator(t *testing.T, variable string) (*firestore.Client, func(args ...string) (string, int)) {
	t.Helper()
	host := emulatorHost(t)
	env := []string{"FIRESTORE_EMULATOR_HOST=" + host, "GOOGLE_CLOUD_PROJECT=demo-tally", variable}
	return emulatortest.ClientAt(t, host, "demo-tally"), func(args ...string) (string, int) { return cliWith(t, env, args...) }
}

// TestCountsOnDocumentsCommands: with TALLY_COUNTS, the commands take a
// document path and a count field, and act on the app's own document.
func TestCountsOnDocumentsCommands(t *testing.T) {
	t.Parallel()
	emulatortest.Require(t)
	fs, cli := ownEmulator(t, "TALLY_COUNTS=posts:likes,views")
	if _, err := fs.Doc("posts/p1").Set(context.Background(), map[string]any{"title": "hello"}); err != nil {
		t.Fatal(err)
	}
	for _, s := range []struct {
		args string
		want string
		code int
	}{
		{"create posts/p2", "there is no document posts/p2: tally counts documents that the app has made", 1},
		{"incr posts/p2 likes", "there is no document posts/p2", 1},
		{"create posts/p1 --shards 3", "created posts/p1 with 3 shards", 0},
		{"incr posts/p1 likes --by 4", "posts/p1 likes +4", 0},
		{"incr posts/p1 views", "posts/p1 views +1", 0},
		{"incr posts/p1", "give the field to count on posts/p1: one of likes, views", 2},
		{"incr posts/p1 shares", `"shares" is not counted on posts; its counts are likes, views`, 2},
		{"get comments/c1 likes", "counts are declared on posts (likes, views)", 2},
		{"sum posts/p1 likes", "posts/p1 likes 4 (sum of the shards)", 0},
		{"get posts/p1 likes", "posts/p1 likes 0", 0}, // no rollup runs here
		{"reconcile posts/p1", "posts/p1 likes: total 0, shards 4, drift -4, repaired", 0},
		{"get posts/p1 likes --json", `{"counter":"posts/p1","field":"likes","total":4}`, 0},
		{"reconcile --all", "posts/p1 views: total 1, shards 1, drift +0", 0},
		{"reset posts/p1", "shards set to 0", 0},
		{"delete posts/p1", "deleted posts/p1", 0},
		{"get posts/p1 likes", "posts/p1 likes 0", 0},
		{"get posts/p1 likes --counts posts:views", `"likes" is not counted on posts; its counts are views`, 2},
	} {
		out, code := cli(strings.Fields(s.args)...)
		if code != s.code || !strings.Contains(out, s.want) {
			t.Errorf("tally %s: exit %d, %q; want exit %d and %q", s.args, code, out, s.code, s.want)
		}
	}
	snap, err := fs.Doc("posts/p1").Get(context.Background())
	if err != nil || len(snap.Data()) != 1 || snap.Data()["title"] != "hello" {
		t.Errorf("after delete, posts/p1 = %v (%v); want its title alone", snap.Data(), err)
	}
}

// TestCommandsUseTheFunctionsConfig: with TALLY_SHARD_FIELD=Count, as a
// Google Go sample writes shards, every command reads and writes Count.
func TestCommandsUseTheFunctionsConfig(t *testing.T) {
	t.Parallel()
	emulatortest.Require(t)
	fs, cli := ownEmulator(t, "TALLY_SHARD_FIELD=Count")
	ctx := context.Background()
	fs.Doc("counters/views").Set(ctx, map[string]any{"num_shards": 2, "total": 1197})
	fs.Doc("counters/views/shards/0").Set(ctx, map[string]any{"Count": 1000})
	fs.Doc("counters/views/shards/1").Set(ctx, map[string]any{"Count": 197})
	for _, s := range []struct{ args, want string }{
		{"sum views", "views 1197"},
		{"incr views --by 3", "views +3"},
		{"sum views", "views 1200"},
		{"reconcile views", "views: total 1197, shards 1200, drift -3, repaired"},
		{"get views", "views 1200"},
		{"sum views --shard-field count", "views 0"}, // a flag overrides
		{"config", "TALLY_SHARD_FIELD=Count"},
	} {
		if out, code := cli(strings.Fields(s.args)...); code != 0 || !strings.Contains(out, s.want) {
			t.Errorf("tally %s: exit %d, %q; want %q", s.args, code, out, s.want)
		}
	}
	snap, _ := fs.Doc("counters/views/shards/0").Get(ctx)
	if _, ok := snap.Data()["count"]; ok {
		t.Error("a command wrote the field count")
	}
	// A reconcile with the wrong field refuses to wipe the total.
	if out, code := cli("reconcile", "views", "--shard-field", "count"); code != 1 || !strings.Contains(out, "no shard holds the shard field") {
		t.Errorf("reconcile with a field no shard holds: exit %d, %q", code, out)
	}
	if out, _ := cli("get", "views"); !strings.Contains(out, "views 1200") {
		t.Errorf("after the refused reconcile: %q", out)
	}
}

func TestConfigCommand(t *testing.T) {
	t.Parallel()
	env := []string{"TALLY_ROLLUP_WINDOW=250ms"}
	cli := func(args ...string) (string, int) { return cliWith(t, env, args...) }
	out, code := cli("config", "--shard-field", "Count")
	for _, want := range []string{"TALLY_ROLLUP_WINDOW=250ms", "# environment", "TALLY_SHARD_FIELD=Count", "# flag --shard-field",
		"TALLY_COLLECTION=counters", "# default", "FIRESTORE_EMULATOR_HOST="} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("tally config: exit %d, no %q:\n%s", code, want, out)
		}
	}
	out, _ = cli("config", "--json")
	var v map[string]string
	if err := json.Unmarshal([]byte(out), &v); err != nil || v["TALLY_ROLLUP_WINDOW"] != "250ms" {
		t.Errorf("config --json: %q", out)
	}
	if out, code := cli("config", "--check"); code != 0 || out != "" {
		t.Errorf("config --check of a good configuration: exit %d, %q", code, out)
	}
	env = append(env, "TALLY_MAX_STEP=abc")
	for _, args := range [][]string{{"config", "--check"}, {"config"}, {"get", "likes"}} {
		if out, code := cli(args...); code != 2 || !strings.Contains(out, "TALLY_MAX_STEP") {
			t.Errorf("tally %s with TALLY_MAX_STEP=abc: exit %d, %q; want exit 2 naming it", strings.Join(args, " "), code, out)
		}
	}
}

// TestDeadEmulatorExplained points the commands at a closed port, at a
// server that is no emulator, and at one that says it is but never answers
// Firestore: each ends with an error naming FIRESTORE_EMULATOR_HOST.
func TestDeadEmulatorExplained(t *testing.T) {
	t.Parallel()
	emulatortest.Long(t, "waits out a dial to a dead emulator")
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	closed := l.Addr().String()
	l.Close()
	notEmulator := httptest.NewServer(http.NotFoundHandler())
	defer notEmulator.Close()
	silent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" {
			w.Write([]byte("Ok"))
			return
		}
		select { // never answers, until the test ends
		case <-r.Context().Done():
		case <-time.After(3 * time.Second):
		}
	}))
	defer func() {
		silent.CloseClientConnections()
		silent.Close()
	}()
	for _, tc := range []struct{ host, want string }{
		{closed, "no Firestore emulator answers at " + closed},
		{strings.TrimPrefix(notEmulator.URL, "http://"), "is not a Firestore emulator"},
		{strings.TrimPrefix(silent.URL, "http://"), "did not answer within 1s"},
	} {
		for _, args := range [][]string{{"get", "likes"}, {"create", "likes"}, {"reconcile", "--all"}, {"watch", "likes"}} {
			start := time.Now()
			out, code := cliWith(t, []string{"FIRESTORE_EMULATOR_HOST=" + tc.host}, append(args, "--timeout", "1s")...)
			if code != 1 || !strings.Contains(out, tc.want) || !strings.Contains(out, "FIRESTORE_EMULATOR_HOST") {
				t.Errorf("%s at %s: exit %d, %q; want %q naming FIRESTORE_EMULATOR_HOST", args[0], tc.host, code, out, tc.want)
			}
			t.Logf("%s at %s: answered in %v", args[0], tc.host, time.Since(start).Round(time.Millisecond))
		}
	}
}

// TestNoCredentialsExplained: with neither an emulator nor credentials, a
// command says how to point it at the emulator.
func TestNoCredentialsExplained(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	_, stderr, code := tallyOut(t, []string{"HOME=" + home, "GOOGLE_APPLICATION_CREDENTIALS=", "CLOUDSDK_CONFIG=" + home},
		"get", "likes", "--project", "p")
	if code != 1 || !strings.Contains(stderr, "FIRESTORE_EMULATOR_HOST") || !strings.Contains(stderr, "application-default login") {
		t.Errorf("exit %d, %q; want how to use the emulator or log in", code, stderr)
	}
}
