package deploy

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
)

// TestCountsRules runs the rules for counts on documents in the emulator
// beside ordinary app rules for posts: clients read a post with its counts
// and edit its title, and can write no count, no bookkeeping, no shard, no
// vote and no key; a user reads their own vote only.
func TestCountsRules(t *testing.T) {
	t.Parallel()
	base, owner := countsRulesEmulator(t, "posts:likes,views;users/*/posts:likes")
	for _, w := range []struct{ path, body string }{
		{"posts/p1", `{"fields":{"title":{"stringValue":"hello"},"owner":{"stringValue":"alice"},"likes":{"integerValue":"5"},"views":{"integerValue":"9"},"_tally":{"mapValue":{"fields":{"num_shards":{"integerValue":"2"}}}}}}`},
		{"posts/b1", `{"fields":{"title":{"stringValue":"bob's"},"owner":{"stringValue":"bob"}}}`},
		{"posts/p1/lives/1/shards/0", `{"fields":{"likes":{"integerValue":"5"}}}`},
		{"posts/p1/lives/1/voters/likes:alice", `{"fields":{}}`},
		{"posts/p1/lives/1/voters/likes:bob", `{"fields":{}}`},
		{"posts/p1/lives/1/voters/likes:a%252Fb", `{"fields":{}}`},
		{"posts/p1/keys/k1", `{"fields":{"response":{"stringValue":"{}"}}}`},
		{"users/u1/posts/p2", `{"fields":{"title":{"stringValue":"mine"},"owner":{"stringValue":"alice"},"likes":{"integerValue":"1"}}}`},
	} {
		if code := owner.do("PATCH", w.path, w.body); code != http.StatusOK {
			t.Fatalf("owner write of %s: %d", w.path, code)
		}
	}
	alice := rest{t, base, userToken(rulesProject, "alice")}
	// A uid with '/' reads its own vote, whose id encodes it (the
	// emulator's REST paths decode %25 twice for rules, so '%' is left
	// to core's TestUserKey).
	slash := rest{t, base, userToken(rulesProject, "a/b")}
	anon := rest{t, base, ""}
	for _, c := range []struct {
		who                string
		cl                 rest
		method, path, body string
		want               int
	}{
		{"anyone", anon, "GET", "posts/p1", "", http.StatusOK},
		{"alice", alice, "PATCH", "posts/p1?updateMask.fieldPaths=title", `{"fields":{"title":{"stringValue":"edited"}}}`, http.StatusOK},
		{"alice", alice, "PATCH", "users/u1/posts/p2?updateMask.fieldPaths=title", `{"fields":{"title":{"stringValue":"edited"}}}`, http.StatusOK},
		{"alice", alice, "POST", "posts?documentId=p3", `{"fields":{"title":{"stringValue":"new"},"owner":{"stringValue":"alice"},"likes":{"integerValue":"0"}}}`, http.StatusOK},
		{"alice", alice, "POST", "posts?documentId=p4", `{"fields":{"title":{"stringValue":"new"},"owner":{"stringValue":"alice"}}}`, http.StatusOK},
		{"alice", alice, "POST", "posts?documentId=p7", `{"fields":{"title":{"stringValue":"as bob"},"owner":{"stringValue":"bob"}}}`, http.StatusForbidden},
		{"alice", alice, "POST", "posts?documentId=p8", `{"fields":{"title":{"stringValue":"no owner"}}}`, http.StatusForbidden},
		{"alice", alice, "PATCH", "posts/b1?updateMask.fieldPaths=title", `{"fields":{"title":{"stringValue":"not hers"}}}`, http.StatusForbidden},
		{"alice", alice, "PATCH", "posts/p1?updateMask.fieldPaths=owner", `{"fields":{"owner":{"stringValue":"bob"}}}`, http.StatusForbidden},
		{"alice", alice, "DELETE", "posts/b1", "", http.StatusForbidden},
		{"alice", alice, "DELETE", "posts/p4", "", http.StatusOK},
		{"anyone", anon, "PATCH", "posts/p1?updateMask.fieldPaths=title", `{"fields":{"title":{"stringValue":"x"}}}`, http.StatusForbidden},
		{"alice", alice, "POST", "posts?documentId=p5", `{"fields":{"owner":{"stringValue":"alice"},"likes":{"integerValue":"1000"}}}`, http.StatusForbidden},
		{"alice", alice, "POST", "posts?documentId=p6", `{"fields":{"owner":{"stringValue":"alice"},"_tally":{"mapValue":{}}}}`, http.StatusForbidden},
		{"alice", alice, "PATCH", "posts/p1?updateMask.fieldPaths=likes", `{"fields":{"likes":{"integerValue":"1000"}}}`, http.StatusForbidden},
		{"alice", alice, "PATCH", "posts/p1?updateMask.fieldPaths=views", `{"fields":{}}`, http.StatusForbidden},
		{"alice", alice, "PATCH", "posts/p1?updateMask.fieldPaths=_tally.as_of", `{"fields":{"_tally":{"mapValue":{"fields":{"as_of":{"integerValue":"1"}}}}}}`, http.StatusForbidden},
		{"alice", alice, "PATCH", "posts/p1", `{"fields":{"title":{"stringValue":"whole document"}}}`, http.StatusForbidden},
		{"alice", alice, "PATCH", "users/u1/posts/p2?updateMask.fieldPaths=likes", `{"fields":{"likes":{"integerValue":"7"}}}`, http.StatusForbidden},
		{"alice", alice, "GET", "posts/p1/lives/1/shards/0", "", http.StatusForbidden},
		{"alice", alice, "PATCH", "posts/p1/lives/1/shards/0", `{"fields":{"likes":{"integerValue":"99"}}}`, http.StatusForbidden},
		{"alice", alice, "PATCH", "posts/p1/lives/1/shards/9", `{"fields":{"likes":{"integerValue":"1"}}}`, http.StatusForbidden},
		{"alice", alice, "GET", "posts/p1/keys/k1", "", http.StatusForbidden},
		{"alice", alice, "GET", "posts/p1/lives/1/voters/likes:alice", "", http.StatusOK},
		{"alice", alice, "GET", "posts/p1/lives/1/voters/views:alice", "", http.StatusNotFound},
		{"alice", alice, "GET", "posts/p1/lives/1/voters/likes:bob", "", http.StatusForbidden},
		{"alice", alice, "GET", "posts/p1/lives/1/voters/likes:alicex", "", http.StatusForbidden},
		{"alice", alice, "GET", "posts/p1/lives/1/voters/x:likes:alice", "", http.StatusForbidden},
		{"a/b", slash, "GET", "posts/p1/lives/1/voters/likes:a%252Fb", "", http.StatusOK},
		{"alice", alice, "GET", "posts/p1/lives/1/voters/likes:a%252Fb", "", http.StatusForbidden},
		{"anyone", anon, "GET", "posts/p1/lives/1/voters/likes:alice", "", http.StatusForbidden},
		{"alice", alice, "PATCH", "posts/p1/lives/1/voters/likes:alice", `{"fields":{}}`, http.StatusForbidden},
		{"alice", alice, "DELETE", "posts/p1/lives/1/voters/likes:alice", "", http.StatusForbidden},
	} {
		if code := c.cl.do(c.method, c.path, c.body); code != c.want {
			t.Errorf("%s %s %s: %d, want %d", c.who, c.method, c.path, code, c.want)
		}
	}
	// The counts are as the owner wrote them.
	resp, err := http.Get(base + "posts/p1")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body strings.Builder
	if _, err := io.Copy(&body, resp.Body); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"integerValue": "5"`, `"integerValue": "9"`, `"stringValue": "edited"`} {
		if !strings.Contains(body.String(), want) {
			t.Errorf("posts/p1 = %s; want it to hold %s", body.String(), want)
		}
	}
}

// TestAggregateRules: a client creates a post with its aggregates absent
// or at their zero, never set otherwise, and never changes them; it edits
// and deletes its own posts and comments only; no client writes the one
// document of aggregates.
func TestAggregateRules(t *testing.T) {
	t.Parallel()
	base, owner := countsRulesEmulator(t, "posts:likes,comments=count(comments),stars=avg(comments.stars),best=max(comments.rating);stats/site:users=count(/users)")
	for _, path := range []string{"posts/a1", "stats/site"} {
		if code := owner.do("PATCH", path, `{"fields":{"title":{"stringValue":"hello"},"owner":{"stringValue":"alice"},"comments":{"integerValue":"5"},"users":{"integerValue":"2"}}}`); code != http.StatusOK {
			t.Fatalf("owner write of %s: %d", path, code)
		}
	}
	if code := owner.do("PATCH", "posts/a1/comments/c1", `{"fields":{"text":{"stringValue":"bob's"},"owner":{"stringValue":"bob"}}}`); code != http.StatusOK {
		t.Fatalf("owner write of a comment: %d", code)
	}
	alice := rest{t, base, userToken(rulesProject, "alice")}
	for _, c := range []struct {
		method, path, body string
		want               int
	}{
		{"POST", "posts?documentId=a2", `{"fields":{"title":{"stringValue":"new"},"owner":{"stringValue":"alice"}}}`, http.StatusOK},
		{"PATCH", "posts/a1?updateMask.fieldPaths=title", `{"fields":{"title":{"stringValue":"edited"}}}`, http.StatusOK},
		{"POST", "posts?documentId=a3", `{"fields":{"owner":{"stringValue":"alice"},"comments":{"integerValue":"0"},"stars":{"nullValue":null}}}`, http.StatusOK},
		{"POST", "posts?documentId=a4", `{"fields":{"owner":{"stringValue":"alice"},"comments":{"integerValue":"5"}}}`, http.StatusForbidden},
		{"POST", "posts?documentId=a5", `{"fields":{"owner":{"stringValue":"alice"},"stars":{"integerValue":"4"}}}`, http.StatusForbidden},
		// 0.0 equals 0 in the rules, but tally keeps counts as integers.
		{"POST", "posts?documentId=a6", `{"fields":{"owner":{"stringValue":"alice"},"comments":{"doubleValue":0}}}`, http.StatusForbidden},
		{"POST", "posts?documentId=a7", `{"fields":{"owner":{"stringValue":"alice"},"likes":{"doubleValue":0}}}`, http.StatusForbidden},
		{"POST", "posts?documentId=a8", `{"fields":{"owner":{"stringValue":"alice"},"likes":{"integerValue":"0"}}}`, http.StatusOK},
		{"PATCH", "posts/a1?updateMask.fieldPaths=comments", `{"fields":{"comments":{"integerValue":"1000"}}}`, http.StatusForbidden},
		{"PATCH", "posts/a1?updateMask.fieldPaths=comments", `{"fields":{}}`, http.StatusForbidden},
		{"POST", "posts/a1/comments?documentId=c2", `{"fields":{"text":{"stringValue":"hi"},"owner":{"stringValue":"alice"}}}`, http.StatusOK},
		{"POST", "posts/a1/comments?documentId=c3", `{"fields":{"text":{"stringValue":"as bob"},"owner":{"stringValue":"bob"}}}`, http.StatusForbidden},
		{"PATCH", "posts/a1/comments/c1?updateMask.fieldPaths=text", `{"fields":{"text":{"stringValue":"not hers"}}}`, http.StatusForbidden},
		{"DELETE", "posts/a1/comments/c1", "", http.StatusForbidden},
		{"DELETE", "posts/a1/comments/c2", "", http.StatusOK},
		// a summed or averaged field is a finite number, or no number
		{"POST", "posts/a1/comments?documentId=c4", `{"fields":{"owner":{"stringValue":"alice"},"stars":{"integerValue":"4"}}}`, http.StatusOK},
		{"POST", "posts/a1/comments?documentId=c5", `{"fields":{"owner":{"stringValue":"alice"},"stars":{"doubleValue":4.5}}}`, http.StatusOK},
		{"POST", "posts/a1/comments?documentId=c6", `{"fields":{"owner":{"stringValue":"alice"},"stars":{"doubleValue":"NaN"}}}`, http.StatusForbidden},
		{"POST", "posts/a1/comments?documentId=c7", `{"fields":{"owner":{"stringValue":"alice"},"stars":{"doubleValue":"Infinity"}}}`, http.StatusForbidden},
		{"POST", "posts/a1/comments?documentId=c8", `{"fields":{"owner":{"stringValue":"alice"},"stars":{"doubleValue":"-Infinity"}}}`, http.StatusForbidden},
		{"PATCH", "posts/a1/comments/c4?updateMask.fieldPaths=stars", `{"fields":{"stars":{"doubleValue":"NaN"}}}`, http.StatusForbidden},
		{"PATCH", "posts/a1/comments/c4?updateMask.fieldPaths=stars", `{"fields":{"stars":{"integerValue":"5"}}}`, http.StatusOK},
		// a compared field is a finite number, or absent
		{"POST", "posts/a1/comments?documentId=c9", `{"fields":{"owner":{"stringValue":"alice"},"rating":{"doubleValue":2.5},"stars":{"stringValue":"five"}}}`, http.StatusOK},
		{"POST", "posts/a1/comments?documentId=c10", `{"fields":{"owner":{"stringValue":"alice"},"rating":{"stringValue":"five"}}}`, http.StatusForbidden},
		{"POST", "posts/a1/comments?documentId=c11", `{"fields":{"owner":{"stringValue":"alice"},"rating":{"doubleValue":"Infinity"}}}`, http.StatusForbidden},
		{"PATCH", "posts/a1/comments/c9?updateMask.fieldPaths=rating", `{"fields":{"rating":{"nullValue":null}}}`, http.StatusForbidden},
		{"PATCH", "posts/a1/comments/c9?updateMask.fieldPaths=rating", `{"fields":{}}`, http.StatusOK},
		{"POST", "posts?documentId=a9", `{"fields":{"owner":{"stringValue":"alice"},"best":{"nullValue":null}}}`, http.StatusOK},
		{"POST", "posts?documentId=a10", `{"fields":{"owner":{"stringValue":"alice"},"best":{"integerValue":"0"}}}`, http.StatusForbidden},
		{"PATCH", "stats/site?updateMask.fieldPaths=title", `{"fields":{"title":{"stringValue":"edited"}}}`, http.StatusForbidden},
		{"PATCH", "stats/site?updateMask.fieldPaths=users", `{"fields":{"users":{"integerValue":"1000"}}}`, http.StatusForbidden},
		{"DELETE", "stats/site", "", http.StatusForbidden},
	} {
		if code := alice.do(c.method, c.path, c.body); code != c.want {
			t.Errorf("alice %s %s %s: %d, want %d", c.method, c.path, c.body, code, c.want)
		}
	}
}

// countsRulesEmulator runs the rules CountsRules renders for counts (a
// TALLY_COUNTS) in the emulator, and returns its REST base and a client
// that is its owner, which no rule binds.
func countsRulesEmulator(t *testing.T, counts string) (string, rest) {
	t.Helper()
	emulatortest.Require(t)
	docs, err := core.ParseCounts(counts)
	if err != nil {
		t.Fatal(err)
	}
	l := core.Default()
	l.Docs = docs
	src, err := CountsRules(l, false)
	if err != nil {
		t.Fatal(err)
	}
	base := rulesEmulator(t, src)
	return base, rest{t, base, "Bearer owner"}
}

// TestWindowRules: on the emulator, a client may create a post with its
// windows at 0 (integers), as a feed ordered by them needs, and its trend
// absent or -Infinity (nothing counted), and may never set or change a
// window, a trend or the series tally keeps in _tally.
func TestWindowRules(t *testing.T) {
	t.Parallel()
	base, owner := countsRulesEmulator(t, "posts:likes,views,views_today=views per day,views_7d=views over 7 days,hot=trend(likes + views/10, 6h)")
	if code := owner.do("PATCH", "posts/w1", `{"fields":{"title":{"stringValue":"hello"},"owner":{"stringValue":"alice"},"views_today":{"integerValue":"3"}}}`); code != http.StatusOK {
		t.Fatalf("owner write: %d", code)
	}
	alice := rest{t, base, userToken(rulesProject, "alice")}
	for _, c := range []struct {
		method, path, body string
		want               int
	}{
		{"POST", "posts?documentId=w2", `{"fields":{"owner":{"stringValue":"alice"},"views_today":{"integerValue":"0"},"views_7d":{"integerValue":"0"},"hot":{"doubleValue":"-Infinity"}}}`, http.StatusOK},
		{"POST", "posts?documentId=w6", `{"fields":{"owner":{"stringValue":"alice"},"hot":{"nullValue":null}}}`, http.StatusForbidden},
		{"POST", "posts?documentId=w7", `{"fields":{"owner":{"stringValue":"alice"},"hot":{"doubleValue":"Infinity"}}}`, http.StatusForbidden},
		{"POST", "posts?documentId=w10", `{"fields":{"owner":{"stringValue":"alice"},"hot":{"doubleValue":-5}}}`, http.StatusForbidden},
		{"POST", "posts?documentId=w8", `{"fields":{"owner":{"stringValue":"alice"},"views_today":{"doubleValue":0}}}`, http.StatusForbidden},
		{"POST", "posts?documentId=w9", `{"fields":{"owner":{"stringValue":"alice"},"likes":{"doubleValue":0}}}`, http.StatusForbidden},
		{"POST", "posts?documentId=w3", `{"fields":{"owner":{"stringValue":"alice"}}}`, http.StatusOK},
		{"POST", "posts?documentId=w4", `{"fields":{"owner":{"stringValue":"alice"},"views_today":{"integerValue":"5"}}}`, http.StatusForbidden},
		{"POST", "posts?documentId=w5", `{"fields":{"owner":{"stringValue":"alice"},"hot":{"doubleValue":99}}}`, http.StatusForbidden},
		{"PATCH", "posts/w1?updateMask.fieldPaths=views_today", `{"fields":{"views_today":{"integerValue":"1000"}}}`, http.StatusForbidden},
		{"PATCH", "posts/w1?updateMask.fieldPaths=views_7d", `{"fields":{"views_7d":{"integerValue":"1000"}}}`, http.StatusForbidden},
		{"PATCH", "posts/w1?updateMask.fieldPaths=hot", `{"fields":{"hot":{"doubleValue":1e9}}}`, http.StatusForbidden},
		{"PATCH", "posts/w1?updateMask.fieldPaths=_tally", `{"fields":{"_tally":{"mapValue":{"fields":{"windows":{"mapValue":{}}}}}}}`, http.StatusForbidden},
		{"PATCH", "posts/w1?updateMask.fieldPaths=title", `{"fields":{"title":{"stringValue":"edited"}}}`, http.StatusOK},
	} {
		if code := alice.do(c.method, c.path, c.body); code != c.want {
			t.Errorf("alice %s %s %s: %d, want %d", c.method, c.path, c.body, code, c.want)
		}
	}
}
