package increment

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/testkit/layouttest"
)

// postsLayout counts likes and views on posts.
func postsLayout(t *testing.T) core.Layout {
	t.Helper()
	l := core.Default()
	var err error
	if l.Docs, err = core.ParseCounts("posts:likes,views"); err != nil {
		t.Fatal(err)
	}
	return l
}

// fieldSums adds up each count over a document's shards.
func fieldSums(t *testing.T, c *firestore.Client, l core.Layout, name string) map[string]int64 {
	t.Helper()
	return lifeSums(t, c, l, name, emulatortest.Life(t, l, c, name))
}

// lifeSums adds up each count over the shards of a life of a document,
// which need not exist now.
func lifeSums(t *testing.T, c *firestore.Client, l core.Layout, name, life string) map[string]int64 {
	t.Helper()
	docs, err := l.Shards(c, name, life).Documents(context.Background()).GetAll()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, d := range docs {
		for f, v := range d.Data() {
			if f == core.FieldBookkeeping {
				continue // the parent's version Increment read (see core.FieldParentSeen)
			}
			n, _ := v.(int64)
			out[f] += n
		}
	}
	return out
}

// TestCountsPerField: on documents, votes, idempotency keys and the public
// limits are each per count: a user's like and view are two votes, one key
// sent for both counts counts each once, and a limit of 2 steps on likes
// leaves views alone.
// A vote on a post that does not exist is a 404 and writes nothing.
func TestCountsPerField(t *testing.T) {
	l := postsLayout(t)
	h, c, ops, host := signedIn(t, Config{Layout: layouttest.Public(l), Limits: Limits{Counter: Rate{N: 2, Per: time.Hour}}})
	u := user(t, host)
	name := "posts/" + emulatortest.ID(t)
	if _, err := c.Doc(name).Create(context.Background(), map[string]any{"title": "hello"}); err != nil {
		t.Fatal(err)
	}
	vote := func(field string, v bool) Response {
		t.Helper()
		code, r, raw := call(h, u.IDToken, fmt.Sprintf(`{"counter":%q,"field":%q,"vote":%v}`, name, field, v))
		if code != http.StatusOK {
			t.Fatalf("vote on %s: %d %s", field, code, raw)
		}
		return r
	}
	if r := vote("likes", true); !r.Changed || r.Field != "likes" {
		t.Errorf("a first like: %+v", r)
	}
	if !vote("views", true).Changed {
		t.Error("a vote on views after a like did not count")
	}
	if vote("likes", true).Changed {
		t.Error("a second like counted")
	}
	if _, err := l.Voter(c, name, emulatortest.Life(t, l, c, name), "likes", u.UID).Get(context.Background()); err != nil {
		t.Errorf("the like is not at voters/likes:%s: %v", u.UID, err)
	}
	for _, field := range []string{"likes", "views"} {
		for range 3 {
			code, _, raw := call(h, u.IDToken, fmt.Sprintf(`{"counter":%q,"field":%q,"by":1}`, name, field), "Idempotency-Key", "k1")
			if code != http.StatusOK {
				t.Fatalf("keyed step on %s: %d %s", field, code, raw)
			}
		}
	}
	for i, want := range []int{http.StatusOK, http.StatusTooManyRequests} {
		if code, _, _ := call(h, u.IDToken, fmt.Sprintf(`{"counter":%q,"field":"likes","by":1}`, name)); code != want {
			t.Errorf("plain step %d on likes, past a keyed one, within the hour: %d, want %d", i+1, code, want)
		}
	}
	// Past the limit, a retry of the keyed step still gets its answer.
	if code, r, raw := call(h, u.IDToken, fmt.Sprintf(`{"counter":%q,"field":"likes","by":1}`, name), "Idempotency-Key", "k1"); code != http.StatusOK || !r.Changed {
		t.Errorf("a retry of a counted keyed step past the limit: %d %s, want its first answer", code, raw)
	}
	if got := fieldSums(t, c, l, name); got["likes"] != 3 || got["views"] != 2 || len(got) != 2 {
		t.Errorf("shards sum %v; want likes 3 (a vote, a keyed and a plain step) and views 2 (a vote and a keyed step)", got)
	}
	ops.Reset()
	missing := "posts/" + emulatortest.ID(t) + "-missing"
	if code, _, raw := call(h, u.IDToken, fmt.Sprintf(`{"counter":%q,"field":"likes","vote":true}`, missing)); code != http.StatusNotFound {
		t.Errorf("a like of a missing post: %d %s, want 404", code, raw)
	}
	if ops.Writes() != 0 {
		t.Errorf("a like of a missing post wrote %d documents", ops.Writes())
	}
	if _, err := c.Doc(missing).Get(context.Background()); err == nil {
		t.Error("a like created the missing post")
	}
}

// TestDocsPlainIncrementIsOneWrite: on documents a plain step is one shard
// write of its count field that verifies the post (billed as a read), no
// transaction, and a read of the post only when its shard count is not
// cached.
func TestDocsPlainIncrementIsOneWrite(t *testing.T) {
	l := postsLayout(t)
	c, ops := emulatortest.CountingClient(t)
	h := New(c, Config{Layout: layouttest.Public(l)})
	name := "posts/" + emulatortest.ID(t)
	if _, err := c.Doc(name).Create(context.Background(), map[string]any{"title": "hi"}); err != nil {
		t.Fatal(err)
	}
	call(h, "", fmt.Sprintf(`{"counter":%q,"field":"views"}`, name))
	ops.Reset()
	for range 5 {
		if code, _, raw := call(h, "", fmt.Sprintf(`{"counter":%q,"field":"views","by":2}`, name)); code != http.StatusOK {
			t.Fatalf("increment: %d %s", code, raw)
		}
	}
	if ops.Writes() != 5 || ops.Reads() != 5 || ops.Verifies() != 5 || ops.Transactions() != 0 {
		t.Errorf("5 increments: %d writes, %d reads (%d verifies), %d transactions; want 5, 5 (5: each a verify), 0",
			ops.Writes(), ops.Reads(), ops.Verifies(), ops.Transactions())
	}
	if got := fieldSums(t, c, l, name); got["views"] != 11 || len(got) != 1 {
		t.Errorf("shards sum %v, want views 11 and nothing else", got)
	}
}

// TestAnswerSaysWhenCommitted: a 200 that changed the count says when its
// write committed: the update time its shard took, for a plain step and for
// a vote's transaction; a retry with the same key says the first's; an
// answer that changed nothing says none.
func TestAnswerSaysWhenCommitted(t *testing.T) {
	l := postsLayout(t)
	h, c, _, host := signedIn(t, Config{Layout: layouttest.Public(l)})
	u := user(t, host)
	name := "posts/" + emulatortest.ID(t)
	if _, err := c.Doc(name).Create(context.Background(), map[string]any{"title": "hello"}); err != nil {
		t.Fatal(err)
	}
	shardTime := func(r Response) time.Time {
		t.Helper()
		snap, err := l.Shard(c, name, emulatortest.Life(t, l, c, name), r.Shard).Get(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return snap.UpdateTime
	}
	committed := func(r Response) time.Time {
		t.Helper()
		at, err := time.Parse(time.RFC3339Nano, r.Committed)
		if err != nil {
			t.Fatalf("committed %q: %v", r.Committed, err)
		}
		return at
	}
	_, plain, raw := call(h, u.IDToken, fmt.Sprintf(`{"counter":%q,"field":"views"}`, name))
	if !committed(plain).Equal(shardTime(plain)) {
		t.Errorf("plain step: committed %s, its shard's update time %s (%s)", plain.Committed, shardTime(plain), raw)
	}
	_, vote, _ := call(h, u.IDToken, fmt.Sprintf(`{"counter":%q,"field":"likes","vote":true}`, name), "Idempotency-Key", "v1")
	if !committed(vote).Equal(shardTime(vote)) {
		t.Errorf("vote: committed %s, its shard's update time %s", vote.Committed, shardTime(vote))
	}
	_, again, _ := call(h, u.IDToken, fmt.Sprintf(`{"counter":%q,"field":"likes","vote":true}`, name), "Idempotency-Key", "v1")
	if again.Committed != vote.Committed {
		t.Errorf("a retry of the vote said committed %s, the first %s", again.Committed, vote.Committed)
	}
	if _, same, _ := call(h, u.IDToken, fmt.Sprintf(`{"counter":%q,"field":"likes","vote":true}`, name)); same.Changed || same.Committed != "" {
		t.Errorf("a like already counted: %+v, want no change and no commit time", same)
	}
}

// TestDocsVotesOnly: a public, votes-only Increment on documents takes a
// vote on each count, once per user, and refuses a plain step on any,
// writing nothing.
func TestDocsVotesOnly(t *testing.T) {
	l := postsLayout(t)
	h, c, _, host := signedIn(t, Config{Layout: layouttest.Public(l), Public: true, VotesOnly: true})
	u := user(t, host)
	name := "posts/" + emulatortest.ID(t)
	if _, err := c.Doc(name).Create(context.Background(), map[string]any{"title": "hello"}); err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{"likes", "views"} {
		if code, _, raw := call(h, u.IDToken, fmt.Sprintf(`{"counter":%q,"field":%q,"by":1}`, name, field)); code != http.StatusBadRequest {
			t.Errorf("a plain step on %s: %d %s, want 400", field, code, raw)
		}
		if code, r, raw := call(h, u.IDToken, fmt.Sprintf(`{"counter":%q,"field":%q,"vote":true}`, name, field)); code != http.StatusOK || !r.Changed {
			t.Errorf("a vote on %s: %d %s, want it counted", field, code, raw)
		}
	}
	if got := fieldSums(t, c, l, name); got["likes"] != 1 || got["views"] != 1 || len(got) != 2 {
		t.Errorf("shards sum %v; want the two votes only", got)
	}
}

// TestAggregatesAreNotIncremented: an aggregate of a post's comments, or a
// document that holds aggregates only, is answered 400 saying why, and
// nothing is written.
func TestAggregatesAreNotIncremented(t *testing.T) {
	l := core.Default()
	var err error
	if l.Docs, err = core.ParseCounts("posts:likes,comments=count(comments);stats/site:users=count(/users)"); err != nil {
		t.Fatal(err)
	}
	c := emulatortest.Client(t)
	h := New(c, Config{Layout: layouttest.Public(l)})
	name := "posts/" + emulatortest.ID(t)
	if _, err := c.Doc(name).Create(context.Background(), map[string]any{"title": "hello"}); err != nil {
		t.Fatal(err)
	}
	for _, body := range []string{`{"counter":"` + name + `","field":"comments"}`, `{"counter":"stats/site","field":"users"}`} {
		w := serve(h, http.MethodPost, "/", body, nil)
		checkError(t, w, http.StatusBadRequest)
		if !strings.Contains(w.Body.String(), "cannot be incremented") {
			t.Errorf("%s: %s; want it to say an aggregate cannot be incremented", body, w.Body)
		}
	}
	if got := fieldSums(t, c, l, name); len(got) > 0 {
		t.Errorf("shards = %v after refused increments, want none", got)
	}
}
