package increment

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"net/http"
	"testing"
	"time"

	firebase "firebase.google.com/go/v4"
	"github.com/golang-jwt/jwt/v4"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/testkit/appchecktest"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/testkit/layouttest"
)

// TestAppCheck: with App Check on, Increment answers 401, writing nothing,
// to a request without a token, or with one that is garbage, signed by
// another key, for another project, or expired; a token the service
// would issue passes. The Admin SDK verifies each token, against keys
// served here (see appchecktest).
func TestAppCheck(t *testing.T) {
	keys := appchecktest.New(t)
	app, err := firebase.NewApp(context.Background(), &firebase.Config{ProjectID: emulatortest.Project})
	if err != nil {
		t.Fatal(err)
	}
	verifier, err := app.AppCheck(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	c := emulatortest.Client(t)
	h := New(c, Config{Layout: layouttest.Public(core.Default()), AutoCreate: true, AppCheck: verifier})
	other, _ := rsa.GenerateKey(rand.Reader, 2048)
	id := emulatortest.ID(t)
	post := func(token string) int {
		hd := map[string]string{}
		if token != "" {
			hd[HeaderAppCheck] = token
		}
		return serve(h, http.MethodPost, "/", `{"counter":"`+id+`"}`, hd).Code
	}
	for name, token := range map[string]string{
		"no token":         "",
		"garbage":          "not-a-token",
		"another key":      keys.Token(t, other, emulatortest.Project, nil),
		"another project":  keys.Token(t, keys.Key, emulatortest.Project, func(c jwt.MapClaims) { c["aud"] = []any{"projects/someone-else"} }),
		"expired":          keys.Token(t, keys.Key, emulatortest.Project, func(c jwt.MapClaims) { c["exp"] = time.Now().Add(-time.Minute).Unix() }),
		"another issuer":   keys.Token(t, keys.Key, emulatortest.Project, func(c jwt.MapClaims) { c["iss"] = "https://example.com/" }),
		"an ID token's":    keys.Token(t, keys.Key, emulatortest.Project, func(c jwt.MapClaims) { c["iss"] = "https://securetoken.google.com/x" }),
		"no app (subject)": keys.Token(t, keys.Key, emulatortest.Project, func(c jwt.MapClaims) { c["sub"] = "" }),
	} {
		if code := post(token); code != http.StatusUnauthorized {
			t.Errorf("%s: %d, want 401", name, code)
		}
	}
	if exists(t, c, id) {
		t.Error("a refused request wrote the counter")
	}
	if code := post(keys.Token(t, keys.Key, emulatortest.Project, nil)); code != http.StatusOK {
		t.Errorf("a valid token: %d, want 200", code)
	}
}
