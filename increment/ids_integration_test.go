package increment

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"firebase.google.com/go/v4/auth"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
)

// TestAnyID: a counter of the guide layout and a counted post named by any
// id Firestore takes are incremented, each on a shard of its own path; a
// vote by a user whose uid is no document id ("a/b", ".", "__x__")
// counts once and is found again.
func TestAnyID(t *testing.T) {
	h, c, _, host := signedIn(t, Config{AutoCreate: true})
	token := user(t, host).IDToken
	ctx := context.Background()
	for _, id := range anyIDs {
		id := emulatortest.ID(t) + id
		if len(id) > core.MaxIDLength {
			id = id[:core.MaxIDLength]
		}
		body, _ := json.Marshal(map[string]any{"counter": id, "by": 2})
		if code, _, raw := call(h, token, string(body)); code != http.StatusOK {
			t.Errorf("%q: %d %s", id, code, raw)
			continue
		}
		if got := sum(shards(t, c, id)); got != 2 {
			t.Errorf("%q: the shards hold %d, want 2", id, got)
		}
	}
	id := emulatortest.ID(t) + "-votes"
	for _, uid := range []string{"a/b", ".", "__x__", "a%2Fb"} {
		if _, err := admin(t).CreateUser(ctx, (&auth.UserToCreate{}).UID(uid)); err != nil && !auth.IsUIDAlreadyExists(err) {
			t.Fatal(err)
		}
		voter := forged(t, token, func(claims map[string]any) { claims["sub"], claims["user_id"] = uid, uid })
		for i, want := range []bool{true, false} {
			code, r, raw := call(h, voter, fmt.Sprintf(`{"counter":%q,"vote":true}`, id))
			if code != http.StatusOK || r.Changed != want {
				t.Errorf("uid %q, like %d: %d %s; want 200 and changed %v", uid, i+1, code, raw, want)
			}
		}
		if _, err := core.Default().Voter(c, id, "", "", uid).Get(ctx); err != nil {
			t.Errorf("uid %q: the vote is not found at its key %q: %v", uid, core.UserKey(uid), err)
		}
	}
	if got := sum(shards(t, c, id)); got != 4 {
		t.Errorf("4 users liked once each and twice: count %d, want 4", got)
	}
}

// TestOncePerUserPerBucket: a view with "once" counts once per signed-in
// user in each bucket: a repeat is answered 200, changed false, and
// writes nothing; another user counts; a view with once and no sign-in,
// with an unknown unit, or with a vote is refused, writing nothing.
func TestOncePerUserPerBucket(t *testing.T) {
	h, c, ops, host := signedIn(t, Config{AutoCreate: true})
	a, b := user(t, host), user(t, host)
	id := emulatortest.ID(t)
	view := func(token string) (int, Response, string) {
		return call(h, token, fmt.Sprintf(`{"counter":%q,"once":"hour"}`, id))
	}
	if code, r, raw := view(a.IDToken); code != http.StatusOK || !r.Changed {
		t.Fatalf("a first view: %d %s", code, raw)
	}
	ops.Reset()
	for range 3 {
		if code, r, raw := view(a.IDToken); code != http.StatusOK || r.Changed || r.Shard != -1 {
			t.Errorf("a repeat in the hour: %d %s; want 200, changed false", code, raw)
		}
	}
	if ops.Writes() != 0 {
		t.Errorf("the repeats wrote %d times", ops.Writes())
	}
	if code, r, raw := view(b.IDToken); code != http.StatusOK || !r.Changed {
		t.Errorf("another user's view: %d %s", code, raw)
	}
	for name, body := range map[string]string{
		"an unknown unit": fmt.Sprintf(`{"counter":%q,"once":"fortnight"}`, id),
		"with a vote":     fmt.Sprintf(`{"counter":%q,"once":"hour","vote":true}`, id),
	} {
		if code, _, raw := call(h, a.IDToken, body); code != http.StatusBadRequest {
			t.Errorf("%s: %d %s, want 400", name, code, raw)
		}
	}
	if got := sum(shards(t, c, id)); got != 2 {
		t.Errorf("count = %d, want 2: one view of each user", got)
	}
	anon, _ := newHandler(t, Config{AutoCreate: true})
	if code, _, raw := call(anon, "", fmt.Sprintf(`{"counter":%q,"once":"hour"}`, id)); code != http.StatusBadRequest {
		t.Errorf("once with no sign-in: %d %s, want 400", code, raw)
	}
}
