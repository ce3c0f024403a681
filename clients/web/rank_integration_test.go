package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/tools/stack"
	"github.com/tallycounters/tally/setup"
)

// TestRankOfAndOnRank: the web client's rankOf gives each post its place
// among five by likes, ties sharing one, each exact at the time it gives
// and costing at most three reads; standingOf tells where a number of
// likes stands among them in one read; boardPage gives the posts at
// places 2 to 4 with their places, and an empty page past the end; a post
// not on the board is refused
// with tally/not-ranked; and onRank of the last post follows it as it is
// liked past the others to #1, its places in order of their times.
func TestRankOfAndOnRank(t *testing.T) {
	t.Parallel()
	node := needNode(t)
	s := startLocal(t, setup.EnvCounts, "posts:likes,rank(likes)")
	fs := emulatortest.ClientAt(t, s.EmulatorHost, stack.DefaultProject)
	ctx := context.Background()
	likes := []int{5, 3, 3, 1, 0}
	var posts []string
	for i, n := range likes {
		p := fmt.Sprintf("posts/r%d", i)
		posts = append(posts, p)
		if _, err := fs.Doc(p).Create(ctx, map[string]any{"title": p}); err != nil {
			t.Fatal(err)
		}
		for range n {
			resp, err := http.Post(s.FunctionsURL+"/Increment", "application/json", strings.NewReader(fmt.Sprintf(`{"counter":%q,"field":"likes"}`, p)))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
	}
	waitRanked(t, s, posts, likes)
	out := runE2E(t, node, "rank.mjs", "RANK_CONFIG", map[string]any{"project": stack.DefaultProject, "firestore": s.EmulatorHost,
		"url": s.FunctionsURL + "/Increment", "posts": posts, "unranked": "posts/nowhere", "climber": posts[4], "climb": 6,
		"collection": "posts", "values": []int{5, 3, 2}})
	var got struct {
		Places    map[string]place `json:"places"`
		Standings map[string]place `json:"standings"`
		Page      boardPage        `json:"page"`
		PastEnd   boardPage        `json:"pastEnd"`
		NotRanked string           `json:"notRanked"`
		Seen      []place          `json:"seen"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("rank.mjs printed %s: %v", out, err)
	}
	for i, p := range posts {
		want := []int{1, 2, 2, 4, 5}[i]
		if g := got.Places[p]; g.Rank != want || g.Of != 5 || g.Reads < 2 || g.Reads > 3 || g.AsOf == "" {
			t.Errorf("rankOf %s (%d likes) = %+v, want #%d of 5 in 2 or 3 reads", p, likes[i], g, want)
		}
	}
	for v, want := range map[string]int{"5": 1, "3": 2, "2": 4} {
		if g := got.Standings[v]; g.Rank != want || g.AtMost != want || g.Of != 5 || g.Reads != 1 || g.Top != 100*float64(want)/5 {
			t.Errorf("standingOf %s likes = %+v, want #%d of 5, exact, in 1 read", v, g, want)
		}
	}
	// ties in the order of their ids, from the last: r2 before r1
	want := []ranked{{posts[2], 3, 2}, {posts[1], 3, 2}, {posts[3], 1, 4}}
	if g := got.Page; fmt.Sprint(g.Documents) != fmt.Sprint(want) || g.Of != 5 || g.Reads < 4 || g.AsOf == "" {
		t.Errorf("boardPage at 1, 3 of them = %+v, want %v of 5, in 4 reads or more", g, want)
	}
	if g := got.PastEnd; len(g.Documents) != 0 || g.Of != 5 || g.Reads != 1 {
		t.Errorf("boardPage past the end = %+v, want none of 5, in 1 read", g)
	}
	if got.NotRanked != "tally/not-ranked" {
		t.Errorf("rankOf a post that does not exist: code %q, want tally/not-ranked", got.NotRanked)
	}
	if n := len(got.Seen); n < 2 || got.Seen[0].Rank != 5 || got.Seen[n-1].Rank != 1 {
		t.Errorf("onRank saw %+v, want #5 first and #1 last", got.Seen)
	}
	for i := 1; i < len(got.Seen); i++ {
		if got.Seen[i].AsOf < got.Seen[i-1].AsOf || got.Seen[i].Rank > got.Seen[i-1].Rank {
			t.Errorf("onRank went back: %+v then %+v", got.Seen[i-1], got.Seen[i])
		}
	}
}

type place struct {
	Rank   int     `json:"rank"`
	AtMost int     `json:"rankAtMost"` // of a standing
	Of     int     `json:"of"`
	Reads  int     `json:"reads"`
	AsOf   string  `json:"asOf"`
	Top    float64 `json:"top"`
}

type ranked struct {
	Document string  `json:"document"`
	Value    float64 `json:"value"`
	Rank     int     `json:"rank"`
}

type boardPage struct {
	Documents []ranked `json:"documents"`
	Of        int      `json:"of"`
	AsOf      string   `json:"asOf"`
	Reads     int      `json:"reads"`
}

// waitRanked waits until Increment answers each post's rank with its
// likes counted, of them all.
func waitRanked(t *testing.T, s *stack.Stack, posts []string, likes []int) {
	t.Helper()
	deadline := time.Now().Add(emulatortest.Liveness)
	for i, p := range posts {
		for {
			resp, err := http.Get(s.FunctionsURL + "/Increment?rank=" + p + "&field=likes")
			if err != nil {
				t.Fatal(err)
			}
			var r struct {
				Of    int64   `json:"of"`
				Value float64 `json:"value"`
			}
			json.NewDecoder(resp.Body).Decode(&r)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && r.Of == int64(len(posts)) && r.Value == float64(likes[i]) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: not ranked with every like in time", p)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}
