package increment

import (
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/tools/authemu"
)

// TestGroupCommitBesideKeysAndVotes: plain increments, which group commit
// batches, arrive at one instance together with increments carrying an
// Idempotency-Key (each key sent four times at once) and votes (each user
// twice), which commit in transactions of their own: every one is answered
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
	var wg sync.WaitGroup
	start := make(chan struct{})
	send := func(u authemu.User, body string, header ...string) {
		wg.Go(func() {
			<-start
			if code, _, raw := call(h, u.IDToken, body, header...); code != http.StatusOK {
				t.Errorf("%s %v: %d %s", body, header, code, raw)
			}
		})
	}
	for i := range plain {
		send(users[i%len(users)], fmt.Sprintf(`{"counter":%q}`, id))
	}
	for k := range keys {
		for range 4 {
			send(users[0], fmt.Sprintf(`{"counter":%q,"by":2}`, id), "Idempotency-Key", fmt.Sprintf("mix-%d", k))
		}
	}
	for _, u := range users {
		for range 2 {
			send(u, fmt.Sprintf(`{"counter":%q,"vote":true}`, id))
		}
	}
	close(start)
	wg.Wait()
	if got := sum(shards(t, c, id)); got != want {
		t.Errorf("the shards hold %d; want %d: 1 + %d plain, %d keys of 2, %d voters", got, want, plain, keys, len(users))
	}
}
