package increment

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	firebase "firebase.google.com/go/v4"
	"firebase.google.com/go/v4/auth"

	"github.com/tallycounters/tally/counting"
	"github.com/tallycounters/tally/internal/emulatortest"
)

// anyIDs are ids Firestore takes that are not plain ASCII names: each
// names a counter, a counted document or a child of tally's as it is.
var anyIDs = []string{"alice@example.com", "a b", "x:y", "a+b", "100%", "%41", "caf\u00e9", "\U0001F600", strings.Repeat("z", counting.MaxIDLength)}

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
		if len(id) > counting.MaxIDLength {
			id = id[:counting.MaxIDLength]
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
		if _, err := counting.Default().Voter(c, id, "", "", uid).Get(ctx); err != nil {
			t.Errorf("uid %q: the vote is not found at its key %q: %v", uid, counting.UserKey(uid), err)
		}
	}
	if got := sum(shards(t, c, id)); got != 4 {
		t.Errorf("4 users liked once each and twice: count %d, want 4", got)
	}
}

// admin is the Admin SDK's Auth client of the Auth emulator signedIn
// started, to make users with the uids a test needs.
func admin(t *testing.T) *auth.Client {
	t.Helper()
	app, err := firebase.NewApp(context.Background(), &firebase.Config{ProjectID: emulatortest.Project})
	if err != nil {
		t.Fatal(err)
	}
	a, err := app.Auth(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return a
}
