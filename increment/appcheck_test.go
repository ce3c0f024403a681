package increment

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"math/big"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	firebase "firebase.google.com/go/v4"
	"firebase.google.com/go/v4/appcheck"
	"github.com/golang-jwt/jwt/v4"

	"github.com/tallycounters/tally/internal/emulatortest"
	"github.com/tallycounters/tally/layout"
)

// appCheckKeys stands in for App Check's public keys, which the Admin SDK
// fetches from Google: no machine here reaches Google. Everything else the
// SDK does to verify a token runs as in production.
type appCheckKeys struct {
	key *rsa.PrivateKey
	srv *httptest.Server
}

func newAppCheckKeys(t *testing.T) *appCheckKeys {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	b64 := base64.RawURLEncoding.EncodeToString
	jwks := `{"keys":[{"kty":"RSA","kid":"test-key","alg":"RS256","use":"sig","n":"` + b64(key.N.Bytes()) +
		`","e":"` + b64(big.NewInt(int64(key.E)).Bytes()) + `"}]}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(jwks))
	}))
	t.Cleanup(srv.Close)
	old := appcheck.JWKSUrl
	appcheck.JWKSUrl = srv.URL
	t.Cleanup(func() { appcheck.JWKSUrl = old })
	return &appCheckKeys{key: key, srv: srv}
}

// token mints an App Check token as the service does: RS256, for the
// project's audience; change alters its claims first.
func (k *appCheckKeys) token(t *testing.T, key *rsa.PrivateKey, change func(jwt.MapClaims)) string {
	t.Helper()
	now := time.Now()
	claims := jwt.MapClaims{
		"iss": "https://firebaseappcheck.googleapis.com/123456789", "sub": "1:123456789:web:0a1b2c",
		"aud": []any{"projects/123456789", "projects/" + emulatortest.Project},
		"iat": now.Unix(), "exp": now.Add(time.Hour).Unix(),
	}
	if change != nil {
		change(claims)
	}
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, claims)
	tok.Header["kid"] = "test-key"
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestAppCheck: with App Check on, Increment answers 401, writing nothing,
// to a request without a token, or with one that is garbage, signed by
// another key, for another project, or expired; a token the service
// would issue passes. The Admin SDK verifies each token, against keys
// served here (see appCheckKeys).
func TestAppCheck(t *testing.T) {
	keys := newAppCheckKeys(t)
	app, err := firebase.NewApp(context.Background(), &firebase.Config{ProjectID: emulatortest.Project})
	if err != nil {
		t.Fatal(err)
	}
	verifier, err := app.AppCheck(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	c := emulatortest.Client(t)
	h := New(c, Config{Layout: layout.Default(), AutoCreate: true, AppCheck: verifier})
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
		"another key":      keys.token(t, other, nil),
		"another project":  keys.token(t, keys.key, func(c jwt.MapClaims) { c["aud"] = []any{"projects/someone-else"} }),
		"expired":          keys.token(t, keys.key, func(c jwt.MapClaims) { c["exp"] = time.Now().Add(-time.Minute).Unix() }),
		"another issuer":   keys.token(t, keys.key, func(c jwt.MapClaims) { c["iss"] = "https://example.com/" }),
		"an ID token's":    keys.token(t, keys.key, func(c jwt.MapClaims) { c["iss"] = "https://securetoken.google.com/x" }),
		"no app (subject)": keys.token(t, keys.key, func(c jwt.MapClaims) { c["sub"] = "" }),
	} {
		if code := post(token); code != http.StatusUnauthorized {
			t.Errorf("%s: %d, want 401", name, code)
		}
	}
	if exists(t, c, id) {
		t.Error("a refused request wrote the counter")
	}
	if code := post(keys.token(t, keys.key, nil)); code != http.StatusOK {
		t.Errorf("a valid token: %d, want 200", code)
	}
}
