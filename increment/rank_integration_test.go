package increment

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/core/rank"
	"github.com/tallycounters/tally/internal/fold"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/testkit/layouttest"
	"github.com/tallycounters/tally/internal/tools/opcount"
)

// TestRankAnswers: GET ?rank= answers a ranked post's place, exact at the
// time it gives, in two or three reads, and writes nothing; a request
// without the document or field, of a field no board ranks, or of a post
// not on the board is a 4xx with a JSON error, and writes nothing either.
func TestRankAnswers(t *testing.T) {
	t.Parallel()
	h, c, ops, coll, names := likedBoard(t, 4, 2, 2)
	ctx := context.Background()
	if _, err := c.Doc(coll+"/unranked").Create(ctx, map[string]any{"title": "none yet"}); err != nil {
		t.Fatal(err)
	}
	ops.Reset()
	target := names[1]
	w := serve(h, http.MethodGet, "/?rank="+target+"&field=likes", "", nil)
	var got RankResponse
	if err := json.Unmarshal(w.Body.Bytes(), &got); w.Code != http.StatusOK || err != nil {
		t.Fatalf("GET rank: %d %s", w.Code, w.Body)
	}
	if got.Rank != 2 || got.Of != 3 || got.Value.Int == nil || *got.Value.Int != 2 || got.Reads != 2 || got.AsOf == "" {
		t.Errorf("GET rank = %+v, want #2 of 3 (a tie), value 2, in 2 reads", got)
	}
	if r := ops.Reads(); r > 3 {
		t.Errorf("the rank cost %d reads on the wire", r)
	}
	// below every document's value: last, with the last, never past Of;
	// -0 stands where 0 does
	for value, want := range map[string][2]int64{"4": {1, 1}, "3": {2, 2}, "2": {2, 2}, "0": {3, 3}, "-0": {3, 3}, "1e9": {1, 1}, "Infinity": {1, 1}, "-Infinity": {3, 3}} {
		ops.Reset()
		w := serve(h, http.MethodGet, "/?rank="+coll+"&field=likes&value="+value, "", nil)
		var got StandingResponse
		if err := json.Unmarshal(w.Body.Bytes(), &got); w.Code != http.StatusOK || err != nil {
			t.Fatalf("GET standing of %s: %d %s", value, w.Code, w.Body)
		}
		if got.Rank != want[0] || got.RankAtMost != want[1] || got.Of != 3 || got.Reads != 1 || got.Top != 100*float64(want[1])/3 || got.AsOf == "" {
			t.Errorf("GET standing of %s = %+v, want #%d of 3 in 1 read", value, got, want[0])
		}
		if r := ops.Reads(); r != 1 {
			t.Errorf("a standing cost %d reads on the wire, want 1", r)
		}
	}
	for _, c := range []struct {
		query string
		code  int
		want  string
	}{
		{"?rank=" + target, 400, "give the document and the field"},
		{"?rank=" + coll + "&field=likes&value=many", 400, "a number"},
		{"?rank=" + coll + "&field=likes&value=NaN", 400, "a number"},
		{"?rank=" + coll + "&field=views&value=3", 404, coll + " is not ranked by views"},
		{"?rank=" + coll + "&field=likes", 400, "not a document path"},
		{"?rank=" + target + "&field=views", 404, coll + " is not ranked by views; ranked: " + coll + ":rank(likes)"},
		{"?rank=comments/c1&field=likes", 400, "counts are declared on " + coll},
		{"?rank=" + coll + "/unranked&field=likes", 404, "is not ranked by likes yet"},
	} {
		w := serve(h, http.MethodGet, "/"+c.query, "", nil)
		var body struct{ Error string }
		if err := json.Unmarshal(w.Body.Bytes(), &body); w.Code != c.code || err != nil || !strings.Contains(body.Error, c.want) {
			t.Errorf("GET %s = %d %s; want %d saying %q", c.query, w.Code, w.Body, c.code, c.want)
		}
	}
	if n := ops.Writes(); n != 0 {
		t.Errorf("ranks wrote %d documents", n)
	}
}

// likedBoard is an Increment handler whose posts, on a board of their
// own, are liked as likes says, each folded onto the board, the board
// settled: its client (counting its reads and writes), the collection
// and the posts' paths, in order.
func likedBoard(t *testing.T, likes ...int) (*Handler, *firestore.Client, *opcount.Ops, string, []string) {
	t.Helper()
	coll := "r" + emulatortest.ID(t) // a board of its own, on an emulator that others use too
	l := core.Default()
	var err error
	if l.Docs, err = core.ParseCounts(coll + ":likes,views,rank(likes)"); err != nil {
		t.Fatal(err)
	}
	c, ops := emulatortest.CountingClient(t)
	h := New(c, Config{Layout: layouttest.Public(l)})
	ctx := context.Background()
	folder := fold.NewFolder(c, l, fold.DefaultSpacing)
	var last time.Time // the last fold's commit
	var names []string
	id := emulatortest.ID(t)
	for i, n := range likes {
		name := coll + "/" + id + string(rune('a'+i))
		names = append(names, name)
		if _, err := c.Doc(name).Create(ctx, map[string]any{"title": "hello"}); err != nil {
			t.Fatal(err)
		}
		for range n {
			if w := serve(h, http.MethodPost, "/", `{"counter":"`+name+`","field":"likes"}`, nil); w.Code != http.StatusOK {
				t.Fatalf("like: %d %s", w.Code, w.Body)
			}
		}
		out, err := folder.Fold(ctx, name)
		if err != nil || len(out.Moves) != 1 {
			t.Fatalf("fold %s: %+v, %v; want one move onto the board", name, out, err)
		}
		last = out.Updated
	}
	b, _ := l.Board(coll, "likes")
	if _, err := rank.Settle(ctx, c, b, last); err != nil {
		t.Fatal(err)
	}
	return h, c, ops, coll, names
}

// TestRankOfInfinities: on a trend's board, a post with nothing counted
// holds -Infinity, and a post at +Infinity (an import's) leads: each is
// answered its place in valid JSON, the value as a string.
func TestRankOfInfinities(t *testing.T) {
	t.Parallel()
	coll := "h" + emulatortest.ID(t)
	l := core.Default()
	var err error
	if l.Docs, err = core.ParseCounts(coll + ":likes,hot=trend(likes, 6h),rank(hot)"); err != nil {
		t.Fatal(err)
	}
	c := emulatortest.Client(t)
	h := New(c, Config{Layout: layouttest.Public(l)})
	ctx := context.Background()
	folder := fold.NewFolder(c, l, fold.DefaultSpacing)
	var last time.Time
	for _, p := range []string{"liked", "new1", "new2"} {
		name := coll + "/" + p
		if _, err := c.Doc(name).Create(ctx, map[string]any{"title": p}); err != nil {
			t.Fatal(err)
		}
		if p == "liked" {
			if w := serve(h, http.MethodPost, "/", `{"counter":"`+name+`","field":"likes"}`, nil); w.Code != http.StatusOK {
				t.Fatalf("like: %d %s", w.Code, w.Body)
			}
		}
		out, err := folder.Fold(ctx, name)
		if err != nil {
			t.Fatalf("fold %s: %v", name, err)
		}
		last = out.Updated
	}
	b, _ := l.Board(coll, "hot")
	if _, err := rank.Settle(ctx, c, b, last); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]struct {
		rank  int64
		value string
	}{"liked": {1, ""}, "new1": {2, `"value":"-Infinity"`}, "new2": {2, `"value":"-Infinity"`}} {
		w := serve(h, http.MethodGet, "/?rank="+coll+"/"+p+"&field=hot", "", nil)
		var got RankResponse
		if err := json.Unmarshal(w.Body.Bytes(), &got); w.Code != http.StatusOK || err != nil || got.Rank != want.rank || got.Of != 3 ||
			!strings.Contains(w.Body.String(), want.value) {
			t.Errorf("GET rank of %s = %d %s (%v); want #%d of 3 and %s", p, w.Code, w.Body, err, want.rank, want.value)
		}
	}
}

// TestRankValueIsExact: a document whose likes are past 2^53 is answered
// with its value exactly, as an integer in the JSON, where a float64 would
// give a neighbour's.
func TestRankValueIsExact(t *testing.T) {
	t.Parallel()
	coll := "x" + emulatortest.ID(t)
	l := core.Default()
	var err error
	if l.Docs, err = core.ParseCounts(coll + ":likes,rank(likes)"); err != nil {
		t.Fatal(err)
	}
	c := emulatortest.Client(t)
	h := New(c, Config{Layout: layouttest.Public(l)})
	ctx := context.Background()
	name := coll + "/big"
	if _, err := c.Doc(name).Create(ctx, map[string]any{"title": "hello"}); err != nil {
		t.Fatal(err)
	}
	const big = 1<<61 + 1 // past 2^53: float64(big) is 1<<61
	life := emulatortest.Life(t, l, c, name)
	if _, err := l.Shard(c, name, life, 0).Set(ctx, map[string]any{"likes": int64(big)}); err != nil {
		t.Fatal(err)
	}
	out, err := fold.NewFolder(c, l, fold.DefaultSpacing).Fold(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := l.Board(coll, "likes")
	if _, err := rank.Settle(ctx, c, b, out.Updated); err != nil {
		t.Fatal(err)
	}
	w := serve(h, http.MethodGet, "/?rank="+name+"&field=likes", "", nil)
	if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"value":2305843009213693953`) {
		t.Errorf("GET rank: %d %s; want the value 2305843009213693953 exactly", w.Code, w.Body)
	}
}
