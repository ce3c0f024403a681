package main

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/tallycounters/tally/counter"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
)

// TestGuideSampleCounter: a counter as the Go code of Google's
// distributed-counter guide makes it (ten shards with a Count field, and
// no parent document) is a counter to every command, with
// TALLY_SHARD_FIELD=Count: get and sum read its shards' sum, incr adds to
// it, reconcile makes its parent with the exact total, and reshard, reset
// and delete act on it.
func TestGuideSampleCounter(t *testing.T) {
	t.Parallel()
	host, project := emulatorHost(t)
	fs := emulatortest.ClientAt(t, host, project)
	ctx := context.Background()
	for i := range 10 {
		if _, err := fs.Doc("counters/gosample/shards/"+strconv.Itoa(i)).Set(ctx, map[string]any{"Count": int64(i % 4)}); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{"FIRESTORE_EMULATOR_HOST=" + host, "GOOGLE_CLOUD_PROJECT=" + project, "TALLY_SHARD_FIELD=Count"}
	runSteps(t, env, []cliStep{
		{[]string{"sum", "gosample"}, "gosample 13 (sum of the shards)"},
		{[]string{"get", "gosample"}, "gosample 13"},
		{[]string{"incr", "gosample", "--by", "3"}, "gosample +3"},
		{[]string{"sum", "gosample"}, "gosample 16"},
		{[]string{"reconcile", "gosample"}, "gosample: total 0, shards 16, drift -16, repaired"},
		{[]string{"get", "gosample"}, "gosample 16"},
		{[]string{"reshard", "gosample", "--shards", "2", "--cache-ttl", "0s"}, "gosample: 10 -> 2 shards"},
		{[]string{"sum", "gosample"}, "gosample 16"},
		{[]string{"reset", "gosample"}, "gosample: shards set to 0, total folded"},
		{[]string{"get", "gosample"}, "gosample 0"},
		{[]string{"delete", "gosample"}, "deleted gosample"},
		{[]string{"get", "gosample"}, "there is no counter gosample"},
	})
}

// TestReconcileAllFinishes: reconcile --all folds every post but one that
// Firestore refuses to fold for good (too big to take its counts), says
// which and why, and exits 1 once it is done.
func TestReconcileAllFinishes(t *testing.T) {
	t.Parallel()
	host, project := emulatorHost(t)
	fs := emulatortest.ClientAt(t, host, project)
	ctx := context.Background()
	// A document's size: its name's (its length, plus 17), each field's
	// name and value (each its length plus 1), plus 32 bytes. This one is
	// 30 bytes within Firestore's 1 MiB, and tally's fields take more.
	huge := "posts/huge"
	body := strings.Repeat("x", 1_000_000)
	more := strings.Repeat("x", 1<<20-30-(len(huge)+17)-(5+len(body)+1)-(5+1)-32)
	if _, err := fs.Doc(huge).Create(ctx, map[string]any{"body": body, "more": more}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"posts/a", "posts/b"} {
		if _, err := fs.Doc(p).Create(ctx, map[string]any{"body": "short"}); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{"FIRESTORE_EMULATOR_HOST=" + host, "GOOGLE_CLOUD_PROJECT=" + project, "TALLY_COUNTS=posts:likes"}
	out, code := cliWith(t, env, "reconcile", "--all")
	for _, want := range []string{"posts/a likes: total 0", "posts/b likes: total 0", "posts/huge: not folded:", "maximum entity size", "1 of 3 counters"} {
		if !strings.Contains(out, want) {
			t.Errorf("reconcile --all: exit %d\n%s\nwant %q", code, out, want)
		}
	}
	if code != 1 {
		t.Errorf("reconcile --all: exit %d, want 1", code)
	}
}

// TestReadWindowsAndAggregates: the CLI reads every field tally keeps of
// a document: a window's count now and its series as a table, a trend's
// score now, an aggregate.
func TestReadWindowsAndAggregates(t *testing.T) {
	t.Parallel()
	host, project := emulatorHost(t)
	fs := emulatortest.ClientAt(t, host, project)
	if _, err := fs.Doc("posts/p1").Create(context.Background(), map[string]any{"title": "hi"}); err != nil {
		t.Fatal(err)
	}
	env := []string{"FIRESTORE_EMULATOR_HOST=" + host, "GOOGLE_CLOUD_PROJECT=" + project, "TALLY_TIME_ZONE=Asia/Tokyo",
		"TALLY_COUNTS=posts:views,comments=count(comments),views_h=views per hour keep 3,hot=trend(views, 6h)"}
	runSteps(t, env, []cliStep{
		{[]string{"incr", "posts/p1", "views", "--by", "3"}, "posts/p1 views +3"},
		{[]string{"reconcile", "posts/p1"}, "posts/p1 views: total 0, shards 3"},
		{[]string{"get", "posts/p1", "views_h"}, "posts/p1 views_h 3"},
		{[]string{"get", "posts/p1", "comments"}, "posts/p1 comments 0"},
		{[]string{"get", "posts/p1", "hot"}, " (views, halving every 6h)"}, // about 3: the views' score now
		{[]string{"series", "posts/p1", "views_h"}, "JST        3"},
		{[]string{"series", "posts/p1", "hot"}, "not a declared window"},
		{[]string{"get", "posts/p1"}, "posts/p1 views 3\nposts/p1 comments 0\nposts/p1 views_h 3\nposts/p1 hot "},
		{[]string{"get", "posts/p1", "nope"}, `"nope" is not a field tally keeps on posts/p1: it keeps views, comments, views_h, hot`},
	})
	out, _ := cliWith(t, env, "series", "posts/p1", "views_h")
	if lines := strings.Split(out, "\n"); len(lines) != 5 || lines[0] != "bucket starts (Asia/Tokyo)  views_h" || !strings.HasSuffix(lines[1], "  0") {
		t.Errorf("series: %q; want a header, 3 closed hours and this one", lines)
	}
}

// TestCommandsFollowTheFunctions: with only the database's address, the
// commands read the counts the functions declared there as they started
// (serve's, or a deployment's), windows and trends among them; where
// nothing is declared, a document's path is refused with what to set.
func TestCommandsFollowTheFunctions(t *testing.T) {
	t.Parallel()
	host, project := emulatorHost(t)
	fs := emulatortest.ClientAt(t, host, project)
	ctx := context.Background()
	env := []string{"FIRESTORE_EMULATOR_HOST=" + host, "GOOGLE_CLOUD_PROJECT=" + project}
	out, code := cliWith(t, env, "get", "posts/p1", "views_today")
	if code != 2 || !strings.Contains(out, "set TALLY_COUNTS, or --counts, as the functions have it") {
		t.Errorf("nothing declared: exit %d\n%s\nwant 2, and what to set", code, out)
	}
	declared := map[string]string{"TALLY_COUNTS": "posts:views,views_today=views per day", "TALLY_TIME_ZONE": "Asia/Tokyo"}
	if err := counter.Declare(ctx, fs, declared, "a test"); err != nil {
		t.Fatal(err)
	}
	if _, err := fs.Doc("posts/p1").Create(ctx, map[string]any{"title": "hi"}); err != nil {
		t.Fatal(err)
	}
	runSteps(t, env, []cliStep{
		{[]string{"incr", "posts/p1", "views", "--by", "2"}, "posts/p1 views +2"},
		{[]string{"reconcile", "posts/p1"}, "posts/p1 views: total 0, shards 2"},
		{[]string{"get", "posts/p1", "views_today"}, "posts/p1 views_today 2"},
		{[]string{"get", "posts/p1"}, "posts/p1 views 2\nposts/p1 views_today 2"},
		{[]string{"series", "posts/p1", "views_today"}, "bucket starts (Asia/Tokyo)  views_today"},
	})
	// what the environment says is taken as given
	out, code = cliWith(t, append(env, "TALLY_COUNTS=posts:likes"), "get", "posts/p1", "views_today")
	if code != 2 || !strings.Contains(out, "it keeps likes") {
		t.Errorf("with TALLY_COUNTS given: exit %d\n%s\nwant 2: it is not declared there", code, out)
	}
}

// cliStep is a command a test runs, and what its output must hold.
type cliStep struct {
	args []string
	want string
}

// runSteps runs each step's command with env, in order, and stops the
// test at the first whose output lacks what it wants.
func runSteps(t *testing.T, env []string, steps []cliStep) {
	t.Helper()
	for _, step := range steps {
		if out, code := cliWith(t, env, step.args...); !strings.Contains(out, step.want) {
			t.Fatalf("tally %s: exit %d\n%s\nwant %q", strings.Join(step.args, " "), code, out, step.want)
		}
	}
}
