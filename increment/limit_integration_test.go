package increment

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
)

// TestUserLimitPerCounter: one signed-in user past the limit on a counter
// gets 429 with Retry-After, and nothing is written; another user, and the
// same user on another counter, are not affected. The limit holds with two
// Increment instances, each with its own client, in front of one database.
func TestUserLimitPerCounter(t *testing.T) {
	cfg := Config{Public: true, AutoCreate: true, Limits: Limits{Counter: Rate{3, time.Minute}}}
	h1, c, _, host := signedIn(t, cfg)
	h2, _, _, _ := signedIn(t, cfg)
	abuser, other := user(t, host), user(t, host)
	id, elsewhere := emulatortest.ID(t), emulatortest.ID(t)
	codes := map[int]int{}
	for i := range 8 {
		h := []*Handler{h1, h2}[i%2]
		code, after := limitedIncrement(h, abuser.IDToken, id)
		codes[code]++
		if n, err := strconv.Atoi(after); code == http.StatusTooManyRequests && (err != nil || n < 1 || n > 20) {
			t.Errorf("429 with Retry-After %q; want 1 to 20 s", after)
		}
	}
	if codes[http.StatusOK] != 3 || codes[http.StatusTooManyRequests] != 5 {
		t.Errorf("8 steps by one user over two instances: %v; want 3 accepted, 5 refused with 429", codes)
	}
	if n := sum(shards(t, c, id)); n != 3 {
		t.Errorf("shards sum %d; want 3: a refused step writes nothing", n)
	}
	for _, tc := range []struct{ who, token, id string }{{"another user", other.IDToken, id}, {"the same user elsewhere", abuser.IDToken, elsewhere}} {
		if code, _ := limitedIncrement(h2, tc.token, tc.id); code != http.StatusOK {
			t.Errorf("%s: %d, want 200", tc.who, code)
		}
	}
}

// TestUserBurst: one user's 25 steps and 5 likes at once, on a new
// counter and on one with counts already, as taps on a slow network send
// them, with the public limits (10 a minute on a counter): every answer
// is true and none is left to a deadline: 10 steps written, 15 refused
// with 429 and nothing written; one like counted, the rest answered
// unchanged; no 503 or 504.
func TestUserBurst(t *testing.T) {
	h, c, _, host := signedIn(t, Config{Public: true, AutoCreate: true, Limits: Limits{Counter: Rate{10, time.Minute}, User: Rate{100, time.Minute}}})
	old := emulatortest.ID(t)
	if code, _ := limitedIncrement(h, user(t, host).IDToken, old); code != http.StatusOK {
		t.Fatalf("a step: %d", code)
	}
	for _, id := range []string{emulatortest.ID(t), old} {
		u := user(t, host)
		base := sum(shards(t, c, id))
		answers := make(chan int, 30)
		var wg sync.WaitGroup
		for i := range 30 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				body := `{"counter":"` + id + `","vote":true}`
				if i < 25 {
					body = `{"counter":"` + id + `"}`
				}
				code, _, _ := call(h, u.IDToken, body)
				answers <- code
			}()
		}
		wg.Wait()
		close(answers)
		codes := map[int]int{}
		for code := range answers {
			codes[code]++
		}
		if codes[http.StatusOK] != 15 || codes[http.StatusTooManyRequests] != 15 {
			t.Errorf("25 steps and 5 likes at once by one user: %v; want the 5 likes and 10 steps answered 200, 15 steps 429", codes)
		}
		if got := sum(shards(t, c, id)) - base; got != 11 {
			t.Errorf("the shards took %d; want 10 steps and 1 like", got)
		}
	}
}

// TestUserLimitOverCounters: a user's steps over all counters are limited
// too, and votes are not: a vote counts once anyway.
func TestUserLimitOverCounters(t *testing.T) {
	h, _, _, host := signedIn(t, Config{Public: true, AutoCreate: true, Limits: Limits{User: Rate{4, time.Hour}}})
	u := user(t, host)
	ok := 0
	for i := range 6 {
		if code, _ := limitedIncrement(h, u.IDToken, fmt.Sprintf("%s-%d", emulatortest.ID(t), i)); code == http.StatusOK {
			ok++
		}
	}
	if ok != 4 {
		t.Errorf("6 steps on 6 counters: %d accepted; want 4", ok)
	}
	if code, _, body := call(h, u.IDToken, `{"counter":"`+emulatortest.ID(t)+`","vote":true}`); code != http.StatusOK {
		t.Errorf("a vote past the limit of steps: %d %s; want 200", code, body)
	}
}

// TestVotesOnly: a public Increment that takes votes only refuses steps,
// and writes nothing for them.
func TestVotesOnly(t *testing.T) {
	h, c, _, host := signedIn(t, Config{Public: true, AutoCreate: true, VotesOnly: true})
	u := user(t, host)
	id := emulatortest.ID(t)
	for _, body := range []string{`{"counter":"` + id + `"}`, `{"counter":"` + id + `","by":1}`} {
		if code, _, msg := call(h, u.IDToken, body); code != http.StatusBadRequest {
			t.Errorf("%s: %d %s; want 400", body, code, msg)
		}
	}
	if exists(t, c, id) {
		t.Error("a refused step created the counter")
	}
	if code, _, msg := call(h, u.IDToken, `{"counter":"`+id+`","vote":true}`); code != http.StatusOK {
		t.Errorf("a vote: %d %s; want 200", code, msg)
	}
}

// BenchmarkLimitCost measures, in one run, a public step by a signed-in
// user with the limits on and off: its time, and the Firestore reads,
// writes and transactions it costs.
func BenchmarkLimitCost(b *testing.B) {
	for _, tc := range []struct {
		name   string
		limits Limits
	}{{"off", Limits{}}, {"on", Limits{Counter: Rate{1_000_000, time.Second}, User: Rate{1_000_000, time.Second}}}} {
		b.Run(tc.name, func(b *testing.B) {
			h, c, ops, host := signedIn(b, Config{Public: true, AutoCreate: true, Limits: tc.limits})
			u := user(b, host)
			id := emulatortest.ID(b)
			if _, err := core.Default().Counter(c, id).Set(context.Background(), map[string]any{core.FieldNumShards: 10}); err != nil {
				b.Fatal(err)
			}
			limitedIncrement(h, u.IDToken, id) // num_shards cached
			ops.Reset()
			for b.Loop() {
				if code, _ := limitedIncrement(h, u.IDToken, id); code != http.StatusOK {
					b.Fatalf("status %d", code)
				}
			}
			b.ReportMetric(float64(ops.Reads())/float64(b.N), "reads/op")
			b.ReportMetric(float64(ops.Writes())/float64(b.N), "writes/op")
			b.ReportMetric(float64(ops.Transactions())/float64(b.N), "transactions/op")
		})
	}
}
