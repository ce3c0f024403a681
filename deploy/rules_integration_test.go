package deploy

import (
	"net/http"
	"testing"

	"github.com/tallycounters/tally/internal/testkit/emulatortest"
)

// TestRules runs the rendered rules in the emulator: clients may read a
// counter (anyone, or signed-in users only) and may write nothing; the
// functions' admin access is not bound by them.
func TestRules(t *testing.T) {
	t.Parallel()
	emulatortest.Require(t)
	for _, v := range []struct {
		name     string
		opts     RulesOptions
		anonRead int
	}{
		{"public reads", RulesOptions{}, http.StatusOK},
		{"signed-in reads", RulesOptions{SignedInReads: true}, http.StatusForbidden},
	} {
		t.Run(v.name, func(t *testing.T) {
			src, err := Rules(v.opts)
			if err != nil {
				t.Fatal(err)
			}
			base := rulesEmulator(t, src)
			owner := rest{t, base, "Bearer owner"}
			if code := owner.do("PATCH", "counters/likes", `{"fields":{"num_shards":{"integerValue":"2"},"total":{"integerValue":"5"}}}`); code != 200 {
				t.Fatalf("owner write: %d", code)
			}
			if code := owner.do("PATCH", "counters/likes/shards/0", `{"fields":{"count":{"integerValue":"5"}}}`); code != 200 {
				t.Fatalf("owner write: %d", code)
			}
			clients := map[string]struct {
				c    rest
				read int
			}{
				"unauthenticated": {rest{t, base, ""}, v.anonRead},
				"signed-in":       {rest{t, base, userToken(rulesProject, "alice")}, http.StatusOK},
			}
			for who, cl := range clients {
				if code := cl.c.do("GET", "counters/likes", ""); code != cl.read {
					t.Errorf("%s read of a counter: %d, want %d", who, code, cl.read)
				}
				for _, w := range []struct{ method, path, body string }{
					{"PATCH", "counters/likes", `{"fields":{"total":{"integerValue":"1000"}}}`},
					{"PATCH", "counters/likes?updateMask.fieldPaths=total", `{"fields":{"total":{"integerValue":"1000"}}}`},
					{"PATCH", "counters/likes?updateMask.fieldPaths=rollup", `{"fields":{"rollup":{"mapValue":{}}}}`},
					{"PATCH", "counters/likes?updateMask.fieldPaths=num_shards", `{"fields":{"num_shards":{"integerValue":"1"}}}`},
					{"DELETE", "counters/likes", ""},
					{"POST", "counters?documentId=mine", `{"fields":{"total":{"integerValue":"1"}}}`},
					{"PATCH", "counters/likes/shards/0", `{"fields":{"count":{"integerValue":"99"}}}`},
					{"PATCH", "counters/likes/shards/7", `{"fields":{"count":{"integerValue":"1"}}}`},
					{"DELETE", "counters/likes/shards/0", ""},
					{"GET", "counters/likes/shards/0", ""},
				} {
					if code := cl.c.do(w.method, w.path, w.body); code != http.StatusForbidden {
						t.Errorf("%s %s %s: %d, want 403", who, w.method, w.path, code)
					}
				}
			}
			// Nothing a client tried changed the counter.
			if code := owner.do("GET", "counters/likes/shards/7", ""); code != http.StatusNotFound {
				t.Errorf("a denied write created a shard: %d", code)
			}

			// Votes: a user reads their own, nobody else's, and writes none;
			// the idempotency keys' records, and the users' limits, are
			// nobody's.
			owner.do("PATCH", "counters/likes/voters/alice", `{"fields":{}}`)
			owner.do("PATCH", "counters/likes/voters/bob", `{"fields":{}}`)
			owner.do("PATCH", "counters/likes/voters/a%252Fb", `{"fields":{}}`)
			owner.do("PATCH", "counters/likes/keys/k1", `{"fields":{"response":{"stringValue":"{}"}}}`)
			owner.do("PATCH", "counters_limits/alice", `{"fields":{}}`)
			alice := rest{t, base, userToken(rulesProject, "alice")}
			slash := rest{t, base, userToken(rulesProject, "a/b")}
			anon := rest{t, base, ""}
			for _, c := range []struct {
				who          string
				cl           rest
				method, path string
				want         int
			}{
				{"alice", alice, "GET", "counters/likes/voters/alice", http.StatusOK},
				{"alice", alice, "GET", "counters/likes/voters/bob", http.StatusForbidden},
				{"a/b", slash, "GET", "counters/likes/voters/a%252Fb", http.StatusOK},
				{"alice", alice, "GET", "counters/likes/voters/a%252Fb", http.StatusForbidden},
				{"unauthenticated", anon, "GET", "counters/likes/voters/alice", http.StatusForbidden},
				{"alice", alice, "PATCH", "counters/likes/voters/alice", http.StatusForbidden},
				{"alice", alice, "DELETE", "counters/likes/voters/alice", http.StatusForbidden},
				{"alice", alice, "PATCH", "counters/likes/voters/carol", http.StatusForbidden},
				{"alice", alice, "GET", "counters/likes/keys/k1", http.StatusForbidden},
				{"unauthenticated", anon, "GET", "counters/likes/keys/k1", http.StatusForbidden},
				{"alice", alice, "PATCH", "counters/likes/keys/k2", http.StatusForbidden},
				{"alice", alice, "GET", "counters_limits/alice", http.StatusForbidden},
				{"alice", alice, "PATCH", "counters_limits/alice", http.StatusForbidden},
				{"alice", alice, "DELETE", "counters_limits/alice", http.StatusForbidden},
			} {
				if code := c.cl.do(c.method, c.path, `{"fields":{}}`); code != c.want {
					t.Errorf("%s %s %s: %d, want %d", c.who, c.method, c.path, code, c.want)
				}
			}
		})
	}
}
