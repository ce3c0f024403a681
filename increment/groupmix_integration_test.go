package increment

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/tools/authemu"
)

// TestGroupCommitBesideKeysAndVotes: plain increments arrive at one
// instance together with increments carrying an Idempotency-Key and votes,
// each user's once; group commit batches the plain ones, and the votes and
// keyed ones apart, each with its record in its batch's commit: some
// votes and keyed steps share a commit. Then each vote and key again,
// three times at once, as presses and retries come: every one is answered
// 200, and the shards hold exactly one count per plain increment, per key
// and per voter.
func TestGroupCommitBesideKeysAndVotes(t *testing.T) {
	h, c, _, host := signedIn(t, Config{AutoCreate: true})
	id := emulatortest.ID(t)
	users := make([]authemu.User, 8)
	for i := range users {
		users[i] = user(t, host)
	}
	if code, _, raw := call(h, users[0].IDToken, fmt.Sprintf(`{"counter":%q}`, id)); code != http.StatusOK {
		t.Fatalf("first increment: %d %s", code, raw)
	}
	const plain, keys = 120, 6
	want := int64(1 + plain + 2*keys + len(users))
	var mu sync.Mutex
	commits, ops := map[string]bool{}, map[string]bool{} // of the votes and keyed steps that changed the count
	// wave sends, all at once, each user's vote and each key's step, times
	// times, with the plain increments in the first.
	wave := func(times int, withPlain bool) {
		var wg sync.WaitGroup
		start := make(chan struct{})
		send := func(u authemu.User, body string, header ...string) {
			wg.Go(func() {
				<-start
				code, r, raw := call(h, u.IDToken, body, header...)
				if code != http.StatusOK {
					t.Errorf("%s %v: %d %s", body, header, code, raw)
				}
				if r.Changed && (len(header) > 0 || strings.Contains(body, "vote")) {
					mu.Lock()
					commits[r.Committed] = true
					ops[u.UID+strings.Join(header, " ")] = true // a retry of a key answers the first's commit
					mu.Unlock()
				}
			})
		}
		for i := range plain {
			if withPlain {
				send(users[i%len(users)], fmt.Sprintf(`{"counter":%q}`, id))
			}
		}
		for range times {
			for k := range keys {
				send(users[0], fmt.Sprintf(`{"counter":%q,"by":2}`, id), "Idempotency-Key", fmt.Sprintf("mix-%d", k))
			}
			for _, u := range users {
				send(u, fmt.Sprintf(`{"counter":%q,"vote":true}`, id))
			}
		}
		close(start)
		wg.Wait()
	}
	wave(1, true) // each vote and key once: they go together
	if len(commits) >= len(ops) {
		t.Errorf("%d votes and keys changed the count in %d commits; want some together", len(ops), len(commits))
	}
	t.Logf("%d votes and keys changed the count in %d commits", len(ops), len(commits))
	wave(3, false) // each again, three times at once: nothing changes
	if got := sum(shards(t, c, id)); got != want {
		t.Errorf("the shards hold %d; want %d: 1 + %d plain, %d keys of 2, %d voters", got, want, plain, keys, len(users))
	}
}
