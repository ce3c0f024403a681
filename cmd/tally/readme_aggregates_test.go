package main

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tallycounters/tally/deploy"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/tools/stack"
)

// countsOf is the TALLY_COUNTS='...' a README line starts with.
func countsOf(t *testing.T, line string) string {
	t.Helper()
	rest, ok := strings.CutPrefix(line, "TALLY_COUNTS='")
	counts, _, ok2 := strings.Cut(rest, "'")
	if !ok || !ok2 {
		t.Fatalf("%s: no TALLY_COUNTS='...'", line)
	}
	return counts
}

// runConfigTriggers: the declaration of aggregates the docs show is taken,
// and its triggers are its shards' and its children's writes, and its
// counted documents' creations.
func runConfigTriggers(t *testing.T, line string) {
	out, stderr, code := tallyOut(t, []string{"TALLY_COUNTS=" + countsOf(t, line)}, "config", "--triggers")
	want := []string{"posts/{doc0}/lives/{life}/shards/{shardId}", "posts/{doc0}/comments/{child}", "products/{doc0}/reviews/{child}", "users/{child}",
		"posts/{doc0} created", "products/{doc0} created", "stats/site created"}
	if code != 0 || strings.Fields(out) == nil || strings.Join(strings.Fields(out), " ") != strings.Join(strings.Fields(strings.Join(want, " ")), " ") {
		t.Errorf("%s: exit %d\n%s%s\nwant the triggers %v", line, code, out, stderr, want)
	}
}

// runAggregatesServe runs serve as the README starts it with aggregates,
// on a free port, and writes comments to a post as an app does: the
// post's counts of them follow.
func runAggregatesServe(t *testing.T, line string) {
	_, out, stderr := start(t, []string{"TALLY_COUNTS=" + countsOf(t, line), "GOOGLE_CLOUD_PROJECT="}, "serve", "--port", "0")
	r := waitReady(t, out, stderr)
	fs := emulatortest.ClientAt(t, r.emulator, stack.DefaultProject)
	ctx := context.Background()
	post := fs.Collection("posts").Doc(emulatortest.ID(t))
	if _, err := post.Create(ctx, map[string]any{"title": "hello"}); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if _, err := post.Collection("comments").NewDoc().Create(ctx, map[string]any{"text": "hi", "hidden": i < 2}); err != nil {
			t.Fatal(err)
		}
	}
	var got map[string]any
	for deadline := time.Now().Add(emulatortest.Liveness); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) { // a liveness bound
		snap, err := post.Get(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got = snap.Data(); got["comments"] == int64(5) && got["shown"] == int64(3) {
			return
		}
	}
	t.Errorf("the post = %v a minute after its 5 comments, 2 hidden; want comments 5, shown 3", got)
}

// runIndexes: the indexes the docs' declaration needs are a composite index
// of the filtered count's two fields, and no index on tally's bookkeeping
// of parts, in the format of firestore.indexes.json.
func runIndexes(t *testing.T, line string) {
	out, stderr, code := tallyOut(t, []string{"TALLY_COUNTS=" + countsOf(t, line)}, "indexes")
	var f deploy.IndexFile
	if err := json.Unmarshal([]byte(out), &f); code != 0 || err != nil {
		t.Fatalf("%s: exit %d, %v\n%s%s", line, code, err, out, stderr)
	}
	want := []string{"composite comments collection hidden lang", "exempt posts _tally.parts", "exempt parts records"}
	if got := f.Lines(); strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Errorf("%s: %v, want %v", line, got, want)
	}
}

// runWindowsServe runs serve as the docs start it with counts by time,
// on a free port, and views a post twice: its views today, in the last 7
// days, and its trend follow.
func runWindowsServe(t *testing.T, line string) {
	zone, _, _ := strings.Cut(strings.TrimPrefix(line[strings.Index(line, "TALLY_TIME_ZONE="):], "TALLY_TIME_ZONE="), " ")
	_, out, stderr := start(t, []string{"TALLY_COUNTS=" + countsOf(t, line), "TALLY_TIME_ZONE=" + zone, "GOOGLE_CLOUD_PROJECT="}, "serve", "--port", "0")
	r := waitReady(t, out, stderr)
	fs := emulatortest.ClientAt(t, r.emulator, stack.DefaultProject)
	ctx := context.Background()
	post := fs.Collection("posts").Doc(emulatortest.ID(t))
	if _, err := post.Create(ctx, map[string]any{"title": "hello"}); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		resp, err := http.Post(r.functions+"/Increment", "application/json", strings.NewReader(`{"counter":"posts/`+post.ID+`","field":"views"}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("a view: %s", resp.Status)
		}
	}
	var got map[string]any
	for deadline := time.Now().Add(emulatortest.Liveness); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) { // a liveness bound
		snap, err := post.Get(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got = snap.Data(); got["views"] == int64(2) && got["views_today"] == int64(2) && got["views_7d"] == int64(2) {
			if hot, ok := got["hot"].(float64); ok && hot > 0 {
				return
			}
		}
	}
	t.Errorf("the post = %v a minute after 2 views; want views, views_today and views_7d 2, and hot", got)
}
