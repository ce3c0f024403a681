// Package appchecktest stands in for Firebase App Check in tests: it serves
// the public keys the Admin SDK fetches from Google (no machine here reaches
// Google) and mints tokens as the service does. Everything else the SDK
// does to verify a token runs as in production.
package appchecktest

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"math/big"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"firebase.google.com/go/v4/appcheck"
	"github.com/golang-jwt/jwt/v4"
)

// AppID is the Firebase app the tokens are minted for.
const AppID = "1:123456789:web:0a1b2c"

// Keys is App Check's signing key, its public half served where the Admin
// SDK of this test binary looks for it, until the test ends.
type Keys struct {
	Key *rsa.PrivateKey
}

// New serves a fresh key's public half as App Check's keys.
func New(t testing.TB) *Keys {
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
	return &Keys{Key: key}
}

// Token mints an App Check token as the service does, RS256 with key, for
// project's audience, valid for an hour; change alters its claims first.
func (k *Keys) Token(t testing.TB, key *rsa.PrivateKey, project string, change func(jwt.MapClaims)) string {
	t.Helper()
	now := time.Now()
	claims := jwt.MapClaims{
		"iss": "https://firebaseappcheck.googleapis.com/123456789", "sub": AppID,
		"aud": []any{"projects/123456789", "projects/" + project},
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
