package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/tools/authemu"
	"github.com/tallycounters/tally/internal/tools/stack"
)

// besideRules is an app's own firestore.rules: its posts, read by anyone.
const besideRules = `rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    match /posts/{post} {
      allow read: if true;
    }
  }
}
`

// TestBesideTheAppsFirebaseEmulators: docs/web.md's way to run tally
// beside an app's own firebase emulators:start. The app's Auth emulator
// (the Firebase CLI's, started as firebase emulators:start --only auth
// starts it) signs a user in; serve, given it in FIREBASE_AUTH_EMULATOR_HOST
// with the app's rules and its dev server's origin as localhost, says it
// uses that emulator and that the origin is allowed as 127.0.0.1 too,
// takes that user's like from a page at either, and enforces the app's
// rules merged with tally's.
func TestBesideTheAppsFirebaseEmulators(t *testing.T) {
	t.Parallel()
	emulatortest.Without(t, "the Auth emulator (Node.js)")
	auth, err := authemu.Start(context.Background(), stack.DefaultProject, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(auth.Stop)
	rules := filepath.Join(t.TempDir(), "firestore.rules")
	if err := os.WriteFile(rules, []byte(besideRules), 0o644); err != nil {
		t.Fatal(err)
	}
	_, out, stderr := start(t, []string{"TALLY_AUTH=firebase", authemu.EnvHost + "=" + auth.Host, "TALLY_CORS_ORIGINS=http://localhost:5000",
		"TALLY_COUNTS=posts:likes,views", "GOOGLE_CLOUD_PROJECT="}, "serve", "--rules", rules, "--port", "0")
	r := waitReady(t, out, stderr)
	banner := strings.Join(r.lines, "\n")
	for _, want := range []string{"using the Firebase Auth emulator at " + auth.Host, "http://localhost:5000", "http://127.0.0.1:5000"} {
		if !strings.Contains(banner, want) {
			t.Errorf("serve's banner says nothing of %q:\n%s", want, banner)
		}
	}
	user, err := authemu.SignUp(auth.Host, "you@example.com", "secret-password")
	if err != nil {
		t.Fatal(err)
	}
	post := "posts/" + emulatortest.ID(t)
	if code, body := rest(t, http.MethodPatch, r.emulator, post, `{"fields":{"title":{"stringValue":"hello"}}}`, true); code != http.StatusOK {
		t.Fatalf("the app's post: %d %s", code, body)
	}
	for _, origin := range []string{"http://localhost:5000", "http://127.0.0.1:5000"} {
		req, _ := http.NewRequest(http.MethodPost, r.functions+"/Increment", strings.NewReader(`{"counter":"`+post+`","field":"views"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Origin", origin)
		req.Header.Set("Authorization", "Bearer "+user.IDToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Access-Control-Allow-Origin") != origin {
			t.Errorf("a view from a page at %s, signed in on the app's Auth emulator: %s %s (Access-Control-Allow-Origin %q)",
				origin, resp.Status, b, resp.Header.Get("Access-Control-Allow-Origin"))
		}
	}
	waitField(t, r.emulator, post, "views", 2)
	if code, _ := rest(t, http.MethodGet, r.emulator, post, "", false); code != http.StatusOK {
		t.Errorf("a signed-out read of the post, which the app's rules allow: %d", code)
	}
	if code, _ := rest(t, http.MethodGet, r.emulator, post+"/shards/0", "", false); code != http.StatusForbidden {
		t.Errorf("a signed-out read of a shard, which tally's rules refuse: %d; want 403", code)
	}
}
