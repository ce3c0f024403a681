package main

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tallycounters/tally/internal/extension"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/tools/extworker"
)

// TestExtensionTakeoverCommand: on a project the extension left shards,
// a partial and its workers' state in (three counters on two documents),
// and a shard under a document no declaration holds, tally extension
// takeover --dry-run reports the counters and totals it found, and what
// it leaves, and writes nothing; takeover moves them, leaves the other,
// and removes the state; a second run finds nothing more. Without
// declarations it refuses, saying how to give them.
func TestExtensionTakeoverCommand(t *testing.T) {
	t.Parallel()
	host, project := emulatorHost(t)
	env := []string{"FIRESTORE_EMULATOR_HOST=" + host, "GOOGLE_CLOUD_PROJECT=" + project}
	if out, code := cliWith(t, env, "extension", "takeover"); code != 2 || !strings.Contains(out, "--extension-counters 'pages:likes,stats.views'") {
		t.Errorf("takeover with no declarations: exit %d:\n%s", code, out)
	}
	env = append(env, "TALLY_EXTENSION_COUNTERS=posts:likes,stats.views;pages:likes")
	fs := emulatortest.ClientAt(t, host, project)
	ctx := context.Background()
	post := fs.Doc("posts/p1")
	for _, shard := range []string{"0b7c-a", "7f3a-b"} {
		if _, err := extworker.Increment(ctx, post.Collection(extension.Collection).Doc(shard), "likes", 2); err != nil {
			t.Fatal(err)
		}
	}
	w := extworker.Worker{Client: fs}
	if _, err := w.ToPartials(ctx, post.Path[strings.Index(post.Path, "/documents/")+len("/documents/"):]); err != nil {
		t.Fatal(err)
	}
	if _, err := extworker.Increment(ctx, post.Collection(extension.Collection).Doc("0b7c-a"), "stats.views", 5); err != nil {
		t.Fatal(err)
	}
	if _, err := extworker.Increment(ctx, fs.Doc("pages/home").Collection(extension.Collection).Doc("0b7c-a"), "likes", 1); err != nil {
		t.Fatal(err)
	}
	if _, err := extworker.Increment(ctx, fs.Doc("admins/mallory").Collection(extension.Collection).Doc("x1"), "likes", 1); err != nil {
		t.Fatal(err)
	}
	if err := w.LeaveState(ctx, extension.DefaultStatePath, 1); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		args []string
		want []string
	}{
		{[]string{"extension", "takeover", "--dry-run", "--quiet", "0s"}, []string{
			"found the extension's counters: 3 on 2 documents, in 2 shards and 2 partials, holding", "  likes 5", "  stats.views 5",
			"would move them", "left 1 as they are", `"admins/mallory/_counter_shards_/x1": admins/mallory is no document TALLY_EXTENSION_COUNTERS declares`,
			"would remove the extension's workers' state: _firebase_ext_/sharded_counter, _firebase_ext_/sharded_counter/workers/0000"}},
		{[]string{"extension", "takeover", "--quiet", "0s"}, []string{"3 on 2 documents, in 2 shards and 2 partials", "moved them", "left 1 as they are", "removed the extension's workers' state"}},
		{[]string{"extension", "takeover", "--quiet", "0s"}, []string{"0 on 0 documents", "left 1 as they are", "found none of the extension's workers' state"}},
	}
	for _, s := range steps {
		out, code := cliWith(t, env, s.args...)
		for _, want := range s.want {
			if code != 0 || !strings.Contains(out, want) {
				t.Errorf("tally %s: exit %d, no %q in:\n%s", strings.Join(s.args, " "), code, want, out)
			}
		}
	}
	snap, err := post.Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if stats, _ := snap.Data()["stats"].(map[string]any); snap.Data()["likes"] != int64(4) || stats["views"] != int64(5) {
		t.Errorf("the post: %v; want likes 4, stats.views 5", snap.Data())
	}
	if page, err := fs.Doc("pages/home").Get(ctx); err != nil || page.Data()["likes"] != int64(1) {
		t.Errorf("the page: %v (%v); want likes 1", page.Data(), err)
	}
	if _, err := fs.Doc("admins/mallory").Get(ctx); status.Code(err) != codes.NotFound {
		t.Errorf("admins/mallory was made: %v", err)
	}
	// The counts moved read as tally's do.
	for args, want := range map[string]string{"pages/home likes": "pages/home likes 1 (the extension's clients', moved as of",
		"posts/p1 stats.views": "posts/p1 stats.views 5", "pages/home views": "counts likes (TALLY_EXTENSION_COUNTERS), not views"} {
		out, _ := cliWith(t, env, append([]string{"get"}, strings.Fields(args)...)...)
		if !strings.Contains(out, want) {
			t.Errorf("tally get %s: %q; want %q", args, out, want)
		}
	}
}
