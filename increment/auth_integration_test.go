package increment

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/firestore"
	firebase "firebase.google.com/go/v4"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/tools/authemu"
	"github.com/tallycounters/tally/internal/tools/opcount"
)

// signedIn is a handler that verifies ID tokens with the Firebase Admin
// SDK against the Auth emulator, on a client whose operations are counted.
func signedIn(t testing.TB, cfg Config) (*Handler, *firestore.Client, *opcount.Ops, string) {
	t.Helper()
	emulatortest.Without(t, "the Auth emulator (Node.js)")
	host, err := authemu.Shared(emulatortest.Project)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(authemu.EnvHost, host)
	app, err := firebase.NewApp(context.Background(), &firebase.Config{ProjectID: emulatortest.Project})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Auth, err = app.Auth(context.Background()); err != nil {
		t.Fatal(err)
	}
	c, ops := emulatortest.CountingClient(t)
	return New(c, cfg), c, ops, host
}

func user(t testing.TB, host string) authemu.User {
	t.Helper()
	u, err := authemu.SignUp(host, fmt.Sprintf("u%d@example.com", time.Now().UnixNano()), "secret-password")
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// call posts body to h with the token (if any) and extra headers, and
// decodes the answer.
func call(h http.Handler, token, body string, header ...string) (int, Response, string) {
	hd := map[string]string{}
	if token != "" {
		hd["Authorization"] = "Bearer " + token
	}
	for i := 0; i+1 < len(header); i += 2 {
		hd[header[i]] = header[i+1]
	}
	w := serve(h, http.MethodPost, "/", body, hd)
	var r Response
	json.Unmarshal(w.Body.Bytes(), &r)
	return w.Code, r, w.Body.String()
}

// forged re-signs nothing: it rewrites the claims of a real emulator token
// (the emulator's tokens are unsigned), as an attacker would try.
func forged(t *testing.T, token string, change func(claims map[string]any)) string {
	t.Helper()
	parts := strings.Split(token, ".")
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var claims map[string]any
	json.Unmarshal(raw, &claims)
	change(claims)
	b, _ := json.Marshal(claims)
	return parts[0] + "." + base64.RawURLEncoding.EncodeToString(b) + "." + parts[2]
}

// TestAuthRefusesBadTokens: no token, an expired one, one for another
// project and garbage each get 401, and nothing is written.
func TestAuthRefusesBadTokens(t *testing.T) {
	h, c, _, host := signedIn(t, Config{AutoCreate: true})
	u := user(t, host)
	id := emulatortest.ID(t)
	body := `{"counter":"` + id + `"}`
	for name, token := range map[string]string{
		"no token": "",
		"expired":  forged(t, u.IDToken, func(c map[string]any) { c["exp"] = time.Now().Add(-time.Hour).Unix() }),
		"another project": forged(t, u.IDToken, func(c map[string]any) {
			c["aud"] = "demo-other"
			c["iss"] = "https://securetoken.google.com/demo-other"
		}),
		"garbage": "not.a.token",
	} {
		code, _, raw := call(h, token, body)
		if code != http.StatusUnauthorized || !strings.Contains(raw, `"error"`) {
			t.Errorf("%s: %d %s, want 401 with a JSON error", name, code, raw)
		}
	}
	if exists(t, c, id) || len(shards(t, c, id)) > 0 {
		t.Error("a refused request wrote to Firestore")
	}
	if code, r, raw := call(h, u.IDToken, body); code != http.StatusOK || !r.Changed {
		t.Errorf("a valid token: %d %s", code, raw)
	}
}

// TestVotes: two users like, one unlikes, one likes twice: the count is 1,
// and each answer says whether it changed the count. A vote costs two
// writes; an increment, one.
func TestVotes(t *testing.T) {
	h, c, ops, host := signedIn(t, Config{AutoCreate: true})
	a, b := user(t, host), user(t, host)
	id := emulatortest.ID(t)
	vote := func(u authemu.User, v bool) Response {
		t.Helper()
		code, r, raw := call(h, u.IDToken, fmt.Sprintf(`{"counter":%q,"vote":%v}`, id, v))
		if code != http.StatusOK {
			t.Fatalf("vote %v: %d %s", v, code, raw)
		}
		return r
	}
	if !vote(a, true).Changed || !vote(b, true).Changed {
		t.Error("a first like did not count")
	}
	ops.Reset()
	if r := vote(a, false); !r.Changed || r.By != -1 {
		t.Errorf("an unlike after a like: %+v", r)
	}
	if w := ops.Writes(); w != 2 {
		t.Errorf("a vote cost %d writes, want 2", w)
	}
	if r := vote(b, true); r.Changed || r.Shard != -1 {
		t.Errorf("a second like: %+v, want it unchanged", r)
	}
	if r := vote(a, false); r.Changed {
		t.Errorf("an unlike without a like: %+v, want it unchanged", r)
	}
	if got := sum(shards(t, c, id)); got != 1 {
		t.Errorf("count = %d, want 1", got)
	}
	if _, err := core.Default().Voter(c, id, "", "", b.UID).Get(context.Background()); err != nil {
		t.Errorf("b's vote is not recorded: %v", err)
	}
	// The votes made the counter busy: once adder.RefreshWrites of them
	// and adder.RefreshAge have passed since its parent was read (on a
	// slow machine), the next increment reads it again, in the
	// background, and no more than once.
	ops.Reset()
	if code, _, _ := call(h, a.IDToken, `{"counter":"`+id+`","by":1}`); code != http.StatusOK || ops.Writes() != 1 || ops.Reads() > 1 {
		t.Errorf("a plain increment: %d, %d writes, %d reads; want 1 write, and no read but a busy counter's refresh", code, ops.Writes(), ops.Reads())
	}
	if code, _, _ := call(h, a.IDToken, `{"counter":"`+id+`","vote":true,"by":1}`); code != http.StatusBadRequest {
		t.Errorf("vote and by together: %d, want 400", code)
	}
}

// TestConcurrentVotesOfOneUser: 50 likes at once by one user count once.
func TestConcurrentVotesOfOneUser(t *testing.T) {
	h, c, _, host := signedIn(t, Config{AutoCreate: true})
	u := user(t, host)
	id := emulatortest.ID(t)
	call(h, u.IDToken, `{"counter":"`+id+`","by":1}`) // the counter exists before the rush
	var mu sync.Mutex
	changed := 0
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, r, raw := call(h, u.IDToken, `{"counter":"`+id+`","vote":true}`)
			if code != http.StatusOK {
				t.Errorf("vote: %d %s", code, raw)
			}
			if r.Changed {
				mu.Lock()
				changed++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if got := sum(shards(t, c, id)) - 1; got != 1 || changed != 1 {
		t.Errorf("50 likes by one user counted %d, %d answers said changed; want 1 and 1", got, changed)
	}
}

// TestIdempotencyKey: the same key, retried 20 times at once, counts once,
// and every retry gets the first answer and writes nothing; another key
// counts again; a key past its expiry counts again.
func TestIdempotencyKey(t *testing.T) {
	h, c, ops, host := signedIn(t, Config{AutoCreate: true})
	u := user(t, host)
	id := emulatortest.ID(t)
	body := `{"counter":"` + id + `","by":3}`
	answers := make([]string, 20)
	var wg sync.WaitGroup
	for i := range answers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, _, raw := call(h, u.IDToken, body, "Idempotency-Key", "req-1")
			if code != http.StatusOK {
				t.Errorf("retry %d: %d %s", i, code, raw)
			}
			answers[i] = raw
		}()
	}
	wg.Wait()
	for _, a := range answers {
		if a != answers[0] {
			t.Errorf("retries answered differently:\n%s\n%s", a, answers[0])
		}
	}
	if got := sum(shards(t, c, id)); got != 3 {
		t.Errorf("20 tries with one key added %d, want 3", got)
	}
	ops.Reset()
	if _, _, raw := call(h, u.IDToken, body, "Idempotency-Key", "req-1"); raw != answers[0] || ops.Writes() != 0 {
		t.Errorf("a later retry: %s with %d writes; want the first answer and no write", raw, ops.Writes())
	}
	snap, err := core.Default().Key(c, id, "", scopedKey(u.UID, "req-1")).Get(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if exp, _ := snap.Data()[core.FieldExpiresAt].(time.Time); time.Until(exp) < 23*time.Hour {
		t.Errorf("the key expires at %v, want a day from now", exp)
	}
	call(h, u.IDToken, body, "Idempotency-Key", "req-2")
	if got := sum(shards(t, c, id)); got != 6 {
		t.Errorf("another key: count %d, want 6", got)
	}
	if code, _, _ := call(h, u.IDToken, body, "Idempotency-Key", "has space"); code != http.StatusBadRequest {
		t.Errorf("a key with a space: %d, want 400", code)
	}

	short, c2, _, _ := signedIn(t, Config{AutoCreate: true, IdempotencyTTL: time.Millisecond})
	call(short, u.IDToken, body, "Idempotency-Key", "req-3")
	time.Sleep(10 * time.Millisecond)
	call(short, u.IDToken, body, "Idempotency-Key", "req-3")
	if got := sum(shards(t, c2, id)); got != 12 {
		t.Errorf("a key past its expiry: count %d, want 12", got)
	}
}

// TestIdempotencyKeyReused: a key sent again with another request (by 500
// after by 1, an unlike after a like) is refused with 422, writes nothing,
// and leaves the key's first answer as it was.
func TestIdempotencyKeyReused(t *testing.T) {
	h, c, ops, host := signedIn(t, Config{AutoCreate: true})
	u := user(t, host)
	id := emulatortest.ID(t)
	first := func(body, key string) string {
		t.Helper()
		code, _, raw := call(h, u.IDToken, body, "Idempotency-Key", key)
		if code != http.StatusOK {
			t.Fatalf("%s: %d %s", body, code, raw)
		}
		return raw
	}
	step, like := `{"counter":"`+id+`","by":1}`, `{"counter":"`+id+`","vote":true}`
	answers := map[string]string{"k-step": first(step, "k-step"), "k-like": first(like, "k-like")}
	for _, c := range []struct{ key, body string }{
		{"k-step", `{"counter":"` + id + `","by":500}`},
		{"k-step", like},
		{"k-like", `{"counter":"` + id + `","vote":false}`},
		{"k-like", step},
	} {
		ops.Reset()
		code, _, raw := call(h, u.IDToken, c.body, "Idempotency-Key", c.key)
		if code != http.StatusUnprocessableEntity || !strings.Contains(raw, "another request") || ops.Writes() != 0 {
			t.Errorf("%s again with %s: %d %s, %d writes; want 422 and nothing written", c.key, c.body, code, raw, ops.Writes())
		}
	}
	if got := sum(shards(t, c, id)); got != 2 {
		t.Errorf("the count is %d; want the first step and the like, 2", got)
	}
	for key, body := range map[string]string{"k-step": step, "k-like": like} {
		if _, _, raw := call(h, u.IDToken, body, "Idempotency-Key", key); raw != answers[key] {
			t.Errorf("%s sent again as first: %s; want its first answer %s", key, raw, answers[key])
		}
	}
}

// TestPublicLimits: a public Increment takes only existing counters (or
// ids its pattern allows), steps of 1, and JSON bodies.
func TestPublicLimits(t *testing.T) {
	h, c, _, host := signedIn(t, Config{Public: true, CounterPattern: regexp.MustCompile(`^(?:post-[0-9]+-likes)$`)})
	u := user(t, host)
	ctx := context.Background()
	id := emulatortest.ID(t)
	if _, err := core.Default().Counter(c, id).Set(ctx, map[string]any{core.FieldNumShards: 2}); err != nil {
		t.Fatal(err)
	}
	unknown := emulatortest.ID(t)
	for _, tc := range []struct {
		name, ctype, target, body string
		want                      int
	}{
		{"existing counter", "application/json", "/", `{"counter":"` + id + `"}`, 200},
		{"unknown counter", "application/json", "/", `{"counter":"` + unknown + `"}`, 404},
		{"a counter the pattern allows", "application/json", "/", `{"counter":"post-1-likes"}`, 200},
		{"by 5", "application/json", "/", `{"counter":"` + id + `","by":5}`, 400},
		{"by -1", "application/json", "/", `{"counter":"` + id + `","by":-1}`, 200},
		{"the query form", "", "/?counter=" + id, "", 415},
		{"the query form, typed as JSON", "application/json", "/?counter=" + id, " ", 415},
		{"a form", "application/x-www-form-urlencoded", "/", `counter=` + id, 415},
		{"text", "text/plain", "/", `{"counter":"` + id + `"}`, 415},
	} {
		r := httptestRequest(tc.target, tc.body, tc.ctype, u.IDToken)
		w := serveRequest(h, r)
		if w.Code != tc.want {
			t.Errorf("%s: %d %s, want %d", tc.name, w.Code, w.Body, tc.want)
		}
	}
	if exists(t, c, unknown) {
		t.Error("a public increment created an unknown counter")
	}
}

func sum(shards map[string]int64) int64 {
	var s int64
	for _, n := range shards {
		s += n
	}
	return s
}

// httptestRequest is a POST to target with body of content type ctype (none
// if empty) and the token.
func httptestRequest(target, body, ctype, token string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, target, strings.NewReader(body))
	if ctype != "" {
		r.Header.Set("Content-Type", ctype)
	}
	r.Header.Set("Authorization", "Bearer "+token)
	return r
}

func serveRequest(h http.Handler, r *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// TestAnonymousUsers: with sign-in on, a signed-out request gets 401, and
// a user signed in anonymously (Firebase's signInAnonymously, no account
// to make) is a signed-in user: its view counts, and its vote counts once
// whatever it sends again. Anyone can make such a user, so what guards
// votes is App Check, not sign-in (docs/http-api.md).
func TestAnonymousUsers(t *testing.T) {
	h, c, _, host := signedIn(t, Config{AutoCreate: true})
	id := emulatortest.ID(t)
	if code, _, raw := call(h, "", `{"counter":"`+id+`"}`); code != http.StatusUnauthorized {
		t.Fatalf("a signed-out view: %d %s; want 401", code, raw)
	}
	if exists(t, c, id) {
		t.Fatal("a signed-out view wrote the counter")
	}
	u, err := authemu.SignInAnonymously(host)
	if err != nil {
		t.Fatal(err)
	}
	if code, r, raw := call(h, u.IDToken, `{"counter":"`+id+`"}`); code != http.StatusOK || !r.Changed {
		t.Errorf("an anonymous user's view: %d %s; want it counted", code, raw)
	}
	for i, want := range []bool{true, false} {
		if code, r, raw := call(h, u.IDToken, `{"counter":"`+id+`-likes","vote":true}`); code != http.StatusOK || r.Changed != want {
			t.Errorf("an anonymous user's vote, sent %d times: %d %s; want changed %v", i+1, code, raw, want)
		}
	}
	if got := sum(shards(t, c, id)) + sum(shards(t, c, id+"-likes")); got != 2 {
		t.Errorf("the view and the vote left %d in the shards; want 2", got)
	}
}
