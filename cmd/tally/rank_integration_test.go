package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/tallycounters/tally/internal/testkit/emulatortest"
)

// TestRankCommand: tally rank prints a post's place by likes, as text and
// as JSON with its read time and its reads; posts whose likes were made
// before any fold are put on the board by tally reconcile --all; a post
// not on the board, and a field no board ranks, are errors that say so.
// tally board prints a page of the board, and --json as Increment's GET
// ?board= answers it.
func TestRankCommand(t *testing.T) {
	t.Parallel()
	emulatortest.Require(t)
	fs, cli := ownEmulator(t, "TALLY_COUNTS=posts:likes,rank(likes)")
	ctx := context.Background()
	for _, p := range []string{"posts/p1", "posts/p2", "posts/p3"} {
		if _, err := fs.Doc(p).Set(ctx, map[string]any{"title": p}); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range []struct {
		args string
		want string
		code int
	}{
		{"rank posts/p1 likes", "posts/p1 is not ranked by likes yet", 1}, // no fold has run
		{"incr posts/p1 likes --by 4", "posts/p1 likes +4", 0},
		{"incr posts/p2 likes", "posts/p2 likes +1", 0},
		{"reconcile --all", "posts/p2 likes: total 0, shards 1, drift -1, repaired", 0},
		{"rank posts/p1 likes", "posts/p1 #1 of 3 by likes (4; top 33.3%)", 0},
		{"rank posts/p3 likes", "posts/p3 #3 of 3 by likes (0; top 100%)", 0},
		{"rank posts/p1 views", "posts is not ranked by views; ranked: posts:rank(likes)", 2},
		{"rank posts likes", "not a document path", 2},
		{"rank posts likes --value 2", "posts 2: top 66.7%, #2 of 3 by likes", 0},
		{"rank posts likes --value 5", "posts 5: top 33.3%, #1 of 3 by likes", 0},
		{"rank posts views --value 5", "posts is not ranked by views", 2},
		{"rank posts likes --value Inf", "posts +Inf: top 33.3%, #1 of 3 by likes", 0},
		{"rank posts likes --value NaN", "NaN is not a number to stand anywhere", 2},
		{"board posts likes", "#1 posts/p1 4\n#2 posts/p2 1\n#3 posts/p3 0\n3 of 3 documents of posts by likes", 0},
		{"board posts likes --offset 1 --limit 1", "#2 posts/p2 1\n1 of 3 documents of posts by likes", 0},
		{"board posts likes --offset 3", "0 of 3 documents of posts by likes", 0},
		{"board posts likes --limit 0", "a page is 1 to 100 documents", 2},
		{"board posts views", "posts is not ranked by views", 2},
	} {
		out, code := cli(strings.Fields(s.args)...)
		if code != s.code || !strings.Contains(out, s.want) {
			t.Errorf("tally %s: exit %d, %q; want exit %d and %q", s.args, code, out, s.code, s.want)
		}
	}
	out, code := cli("rank", "posts/p2", "likes", "--json")
	var got struct {
		Rank, Of, Reads int
		AsOf            string `json:"as_of"`
	}
	if err := json.Unmarshal([]byte(out), &got); code != 0 || err != nil || got.Rank != 2 || got.Of != 3 || got.Reads != 2 {
		t.Fatalf("tally rank --json: exit %d, %q; want rank 2 of 3 in 2 reads", code, out)
	}
	if _, err := time.Parse(time.RFC3339Nano, got.AsOf); err != nil {
		t.Errorf("as_of %q is no RFC 3339 time: %v", got.AsOf, err)
	}
	out, code = cli("board", "posts", "likes", "--offset", "1", "--json")
	var page struct {
		Documents []struct {
			Document string
			Value    int
			Rank     int
		}
		Of, Reads int
	}
	if err := json.Unmarshal([]byte(out), &page); code != 0 || err != nil || len(page.Documents) != 2 || page.Documents[0].Document != "posts/p2" ||
		page.Documents[1].Rank != 3 || page.Of != 3 || page.Reads != 3 {
		t.Fatalf("tally board --json: exit %d, %q; want posts/p2 and posts/p3 of 3, in 3 reads", code, out)
	}
	out, code = cli("rank", "posts", "likes", "--value", "4", "--json")
	var top struct {
		Rank, Of, Reads int
		AtMost          int     `json:"rank_at_most"`
		Top             float64 `json:"top"`
	}
	if err := json.Unmarshal([]byte(out), &top); code != 0 || err != nil || top.Rank != 1 || top.AtMost != 1 || top.Of != 3 || top.Reads != 1 || top.Top != 100.0/3 {
		t.Fatalf("tally rank --value --json: exit %d, %q; want #1 of 3, the top 33.3%%, in 1 read", code, out)
	}
}
