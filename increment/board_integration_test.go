package increment

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/tallycounters/tally/internal/core/rank"
)

// TestBoardAnswers: GET ?board= answers the posts at the places asked,
// each with its place (ties share one, in the order of their ids from the
// last) and its value, exact at the time it gives, in the reads it tells,
// and writes nothing; a page past the end is an empty list; a request
// without the collection or field, with an offset or a limit out of
// shape, or of a field no board ranks, is a 4xx with a JSON error.
func TestBoardAnswers(t *testing.T) {
	t.Parallel()
	h, _, ops, coll, p := likedBoard(t, 4, 2, 2, 7)
	ops.Reset()
	var writes int64 // of the pages read, each counted from its reset
	for _, c := range []struct {
		query string
		want  string // document:value:rank, in order
		reads int
	}{
		{"&limit=2", p[3] + ":7:1 " + p[0] + ":4:2", 1 + 2},
		{"", p[3] + ":7:1 " + p[0] + ":4:2 " + p[2] + ":2:3 " + p[1] + ":2:3", 1 + 4},
		{"&offset=3&limit=1", p[1] + ":2:3", 1 + 2}, // the tie's first read too: its cell's start
		{"&offset=2&limit=20", p[2] + ":2:3 " + p[1] + ":2:3", 1 + 2},
		{"&offset=4", "", 1},
		{"&offset=400&limit=100", "", 1},
	} {
		writes += ops.Writes()
		ops.Reset()
		w := serve(h, http.MethodGet, "/?board="+coll+"&field=likes"+c.query, "", nil)
		var got BoardResponse
		if err := json.Unmarshal(w.Body.Bytes(), &got); w.Code != http.StatusOK || err != nil {
			t.Fatalf("GET board%s: %d %s", c.query, w.Code, w.Body)
		}
		var docs []string
		for _, d := range got.Documents {
			docs = append(docs, fmt.Sprintf("%s:%v:%d", d.Document, *d.Value.Int, d.Rank))
		}
		if strings.Join(docs, " ") != c.want || got.Of != 4 || got.Reads != c.reads || got.AsOf == "" || got.Documents == nil {
			t.Errorf("GET board%s = %s, want [%s] of 4 in %d reads", c.query, w.Body, c.want, c.reads)
		}
		if r := ops.Reads(); r != int64(got.Reads) {
			t.Errorf("GET board%s told %d reads, cost %d", c.query, got.Reads, r)
		}
	}
	for _, c := range []struct {
		query string
		code  int
		want  string
	}{
		{"?board=" + coll, 400, "give the collection and the field"},
		{"?board=" + coll + "&field=likes&offset=-1", 400, "an offset of 0 or more"},
		{"?board=" + coll + "&field=likes&limit=0", 400, fmt.Sprintf("a limit of 1 to %d", rank.MaxPage)},
		{"?board=" + coll + "&field=likes&limit=101", 400, "a limit of 1 to"},
		{"?board=" + coll + "&field=likes&offset=two", 400, "an offset of 0 or more"},
		{"?board=" + coll + "&field=views", 404, coll + " is not ranked by views; ranked: " + coll + ":rank(likes)"},
	} {
		w := serve(h, http.MethodGet, "/"+c.query, "", nil)
		var body struct{ Error string }
		if err := json.Unmarshal(w.Body.Bytes(), &body); w.Code != c.code || err != nil || !strings.Contains(body.Error, c.want) {
			t.Errorf("GET %s = %d %s; want %d saying %q", c.query, w.Code, w.Body, c.code, c.want)
		}
	}
	if n := writes + ops.Writes(); n != 0 {
		t.Errorf("pages wrote %d documents", n)
	}
}
