package main

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tallycounters/tally/internal/testkit/emulatortest"
)

// TestCounterCommands runs a CLI session against an emulator: create, incr,
// sum, reshard, reconcile, get, reset, delete, in text and JSON.
func TestCounterCommands(t *testing.T) {
	t.Parallel()
	host, project := emulatorHost(t)
	env := []string{"FIRESTORE_EMULATOR_HOST=" + host, "GOOGLE_CLOUD_PROJECT=" + project}
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
		{"get posts/p1 likes --counts posts:views", `"likes" is not a field tally keeps on posts/p1: it keeps views`, 2},
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
