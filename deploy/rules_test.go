package deploy

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/tools/emulator"
)

// rest talks to the emulator's REST API as one kind of client.
type rest struct {
	t    *testing.T
	base string
	auth string // Authorization header; "" is an unauthenticated client
}

func (r rest) do(method, path, body string) int {
	r.t.Helper()
	req, err := http.NewRequest(method, r.base+path, strings.NewReader(body))
	if err != nil {
		r.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if r.auth != "" {
		req.Header.Set("Authorization", r.auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// userToken is an unsigned ID token for a signed-in user, which the emulator
// accepts as it is.
func userToken(project, uid string) string {
	enc := base64.RawURLEncoding.EncodeToString
	header, _ := json.Marshal(map[string]string{"alg": "none", "typ": "JWT"})
	now := time.Now().Unix()
	claims, _ := json.Marshal(map[string]any{
		"iss": "https://securetoken.google.com/" + project, "aud": project,
		"sub": uid, "user_id": uid, "iat": now, "exp": now + 3600, "auth_time": now,
		"firebase": map[string]any{"sign_in_provider": "password", "identities": map[string]any{}},
	})
	return "Bearer " + enc(header) + "." + enc(claims) + "."
}

// rulesProject is the project of the rules tests' requests.
const rulesProject = "demo-rules"

// rulesEmulator starts an emulator that enforces the rules src, for the
// test, and returns the REST address of its documents in rulesProject.
func rulesEmulator(t *testing.T, src string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "firestore.rules")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	e, err := emulatortest.Start(emulator.Options{Rules: file})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Stop() })
	return "http://" + e.Host() + "/v1/projects/" + rulesProject + "/databases/(default)/documents/"
}

func TestRulesRender(t *testing.T) {
	src, err := Rules(RulesOptions{Collection: "votes", SignedInReads: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"match /votes/{counterId}", "allow read: if request.auth != null;", "allow write: if false;"} {
		if !strings.Contains(src, want) {
			t.Errorf("rendered rules lack %q", want)
		}
	}
	if _, err := Rules(RulesOptions{Collection: "a/b"}); err == nil {
		t.Error("a collection with a slash was accepted")
	}
}
