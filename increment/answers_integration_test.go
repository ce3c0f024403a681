package increment

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/internal/adder"
	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/testkit/layouttest"
)

// behindProxy returns a handler whose Firestore client reaches the
// emulator through a proxy that can lose its answers, the proxy, and a
// client that reaches the emulator directly.
func behindProxy(t *testing.T, cfg Config) (*Handler, *emulatortest.Proxy, *firestore.Client) {
	t.Helper()
	direct := emulatortest.Client(t)
	p := emulatortest.NewProxy(t)
	t.Setenv("FIRESTORE_EMULATOR_HOST", p.Addr)
	cfg.Layout, cfg.AutoCreate = layouttest.Public(core.Default()), true
	return New(emulatortest.Client(t), cfg), p, direct
}

// answer posts body and returns the status, the error message and the
// Retry-After header.
func answer(h http.Handler, body string, header map[string]string) (int, string, string) {
	w := serve(h, http.MethodPost, "/", body, header)
	var e struct{ Error string }
	json.Unmarshal(w.Body.Bytes(), &e)
	return w.Code, e.Error, w.Header().Get("Retry-After")
}

// TestPlainIncrementIsOneWrite: once num_shards is cached, a plain
// increment is one write in one commit, with no read and no transaction.
func TestPlainIncrementIsOneWrite(t *testing.T) {
	c, ops := emulatortest.CountingClient(t)
	h := New(c, Config{Layout: layouttest.Public(core.Default()), AutoCreate: true})
	id := emulatortest.ID(t)
	body := `{"counter":"` + id + `"}`
	if code, msg, _ := answer(h, body, nil); code != http.StatusOK {
		t.Fatalf("first increment: %d %s", code, msg)
	}
	ops.Reset()
	for range 5 {
		if code, msg, _ := answer(h, body, nil); code != http.StatusOK {
			t.Fatalf("increment: %d %s", code, msg)
		}
	}
	if r, w, tx := ops.Reads(), ops.Writes(), ops.Transactions(); r != 0 || w != 5 || tx != 0 {
		t.Errorf("5 increments cost %d reads, %d writes, %d transactions; want 0, 5, 0", r, w, tx)
	}
}

// TestUnconfirmedCommitIsNotARefusal: the emulator applies the commit,
// and its answer is lost until the request's time is up. The client is
// told 504, "may have been applied", with no Retry-After: never a refusal
// that invites a blind retry. The shard holds the increment.
func TestUnconfirmedCommitIsNotARefusal(t *testing.T) {
	h, p, direct := behindProxy(t, Config{Timeout: 3 * time.Second})
	id := emulatortest.ID(t)
	body := `{"counter":"` + id + `"}`
	answer(h, body, nil) // num_shards is cached now
	p.Hold()
	code, msg, after := answer(h, body, nil)
	p.Release()
	if code != http.StatusGatewayTimeout || !strings.Contains(msg, "may have been applied") || after != "" {
		t.Errorf("answer %d %q, Retry-After %q; want 504, may have been applied, no Retry-After", code, msg, after)
	}
	waitSum(t, direct, id, 2)
}

// TestCutCommitIsNotSentAgain: the emulator applies the commit and the
// connection breaks before its answer. The Firestore client would send an
// UNAVAILABLE commit again; tally's does not, as the first may have been
// applied: 504, and the shard counts the increment once.
func TestCutCommitIsNotSentAgain(t *testing.T) {
	h, p, direct := behindProxy(t, Config{})
	id := emulatortest.ID(t)
	body := `{"counter":"` + id + `"}`
	answer(h, body, nil)
	p.CutNext()
	code, msg, _ := answer(h, body, nil)
	if code != http.StatusGatewayTimeout || !strings.Contains(msg, "may have been applied") {
		t.Errorf("answer %d %q; want 504, may have been applied", code, msg)
	}
	time.Sleep(500 * time.Millisecond) // a commit sent again would have landed by now
	if n := sum(shards(t, direct, id)); n != 2 {
		t.Errorf("shards sum %d after 2 increments, one cut; want 2", n)
	}
}

// TestUnconfirmedKeyedCommit: with an Idempotency-Key, the 504 says to
// retry with the same key, and after that retry the shards hold the
// increment once, whether or not the first attempt was applied.
func TestUnconfirmedKeyedCommit(t *testing.T) {
	h, p, direct := behindProxy(t, Config{Timeout: 3 * time.Second})
	id := emulatortest.ID(t)
	body := `{"counter":"` + id + `"}`
	answer(h, body, nil)
	key := map[string]string{"Idempotency-Key": "k-" + id}
	p.Hold()
	code, msg, _ := answer(h, body, key)
	p.Release()
	if code != http.StatusGatewayTimeout || !strings.Contains(msg, "same Idempotency-Key") {
		t.Errorf("answer %d %q; want 504 telling to retry with the same key", code, msg)
	}
	if code, msg, _ := answer(h, body, key); code != http.StatusOK {
		t.Errorf("retry with the same key: %d %s", code, msg)
	}
	if n := sum(shards(t, direct, id)); n != 2 {
		t.Errorf("shards sum %d after the retry; want 2: the key counts once", n)
	}
}

// TestRefusalsWriteNothing: each refusal, which invites a retry, leaves
// nothing written: one past MaxInFlight while Firestore is slow (503 with
// Retry-After after QueueWait), one whose deadline leaves too little time
// for a commit, and one while Firestore is unreachable.
func TestRefusalsWriteNothing(t *testing.T) {
	h, p, direct := behindProxy(t, Config{MaxInFlight: 1})
	id := emulatortest.ID(t)
	body := `{"counter":"` + id + `"}`
	answer(h, body, nil)
	p.Hold()
	var wg sync.WaitGroup
	wg.Add(1)
	first := 0
	go func() { defer wg.Done(); first, _, _ = answer(h, body, nil) }()
	for len(h.turns) == 0 {
		time.Sleep(time.Millisecond)
	}
	code, msg, after := answer(h, body, nil)
	if code != http.StatusServiceUnavailable || after != "1" || !strings.Contains(msg, "nothing was written") {
		t.Errorf("past MaxInFlight: %d %q, Retry-After %q; want 503, nothing was written, Retry-After 1", code, msg, after)
	}
	p.Release()
	wg.Wait()
	if first != http.StatusOK {
		t.Errorf("the increment in flight: %d, want 200", first)
	}
	if n := sum(shards(t, direct, id)); n != 2 {
		t.Errorf("shards sum %d: want 2, the two increments answered 200", n)
	}

	short := New(direct, Config{Layout: layouttest.Public(core.Default()), AutoCreate: true, Timeout: adder.MinCommitTime / 2})
	if code, _, after := answer(short, body, nil); code != http.StatusServiceUnavailable || after != "1" {
		t.Errorf("too little time for a commit: %d, Retry-After %q; want 503, 1", code, after)
	}
	if n := sum(shards(t, direct, id)); n != 2 {
		t.Errorf("shards sum %d after a refusal; want 2", n)
	}
}

// waitSum waits until counter id's shards sum to want: a held commit lands
// once its answer is let go.
func waitSum(t *testing.T, c *firestore.Client, id string, want int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		n := sum(shards(t, c, id))
		if n == want {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("shards sum %d, want %d", n, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestSaturatedIncrementsAnswerTheirOwnCommits: increments of a shard
// held at 2^63-1, where Firestore's increment saturates and the shard
// does not change, each answer its own commit's time, not the shard's
// last update time: one after the other, each later than the last.
func TestSaturatedIncrementsAnswerTheirOwnCommits(t *testing.T) {
	c := emulatortest.Client(t)
	h := New(c, Config{Layout: layouttest.Public(core.Default()), AutoCreate: true})
	id := emulatortest.ID(t)
	ctx := context.Background()
	if _, err := c.Doc("counters/"+id).Create(ctx, map[string]any{"num_shards": int64(1)}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Doc("counters/"+id+"/shards/0").Create(ctx, map[string]any{"count": int64(math.MaxInt64)}); err != nil {
		t.Fatal(err)
	}
	var last string
	for i := range 4 {
		w := serve(h, http.MethodPost, "/", `{"counter":"`+id+`"}`, nil)
		var a struct{ Committed string }
		if err := json.Unmarshal(w.Body.Bytes(), &a); err != nil || w.Code != http.StatusOK {
			t.Fatalf("increment: %d %s", w.Code, w.Body)
		}
		if a.Committed <= last {
			t.Errorf("increment %d of a saturated shard answered committed %s, after %s", i+1, a.Committed, last)
		}
		last = a.Committed
	}
}
