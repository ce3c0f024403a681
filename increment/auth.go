package increment

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"

	"github.com/tallycounters/tally/internal/core"
)

// authenticate returns the uid of the caller's verified Firebase ID token,
// or "" when this Increment verifies none. Verifying reads no Firestore
// document: the Admin SDK checks the token's signature against Google's
// public keys, which it caches.
func (h *Handler) authenticate(ctx context.Context, r *http.Request) (string, error) {
	if h.cfg.Auth == nil {
		return "", nil
	}
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || strings.TrimSpace(token) == "" {
		return "", unauthorized("sign in: send a Firebase ID token as Authorization: Bearer <token>")
	}
	t, err := h.cfg.Auth.VerifyIDToken(ctx, strings.TrimSpace(token))
	if err != nil {
		h.log.Info("increment: refused an ID token", "error", err.Error())
		return "", unauthorized("the ID token is not valid for this project, or has expired: sign in again")
	}
	return t.UID, nil
}

func unauthorized(msg string) error { return errorf(core.Unauthenticated, "%s", msg) }

// HeaderAppCheck carries a Firebase App Check token.
const HeaderAppCheck = "X-Firebase-AppCheck"

// checkApp verifies the request's App Check token, when this Increment
// asks for one: proof that the request comes from the app, not a script.
// Verifying reads no Firestore document: the Admin SDK checks the token's
// signature against App Check's public keys, which it caches.
func (h *Handler) checkApp(r *http.Request) error {
	if h.cfg.AppCheck == nil {
		return nil
	}
	token := strings.TrimSpace(r.Header.Get(HeaderAppCheck))
	if token == "" {
		return unauthorized("send the app's Firebase App Check token as " + HeaderAppCheck)
	}
	if _, err := h.cfg.AppCheck.VerifyToken(token); err != nil {
		h.log.Info("increment: refused an App Check token", "error", err.Error())
		return unauthorized("the App Check token is not valid for this project, or has expired")
	}
	return nil
}

// maxKeyBytes bounds an Idempotency-Key.
const maxKeyBytes = 128

// idempotencyKey reads the Idempotency-Key header: "" when absent; 1 to 128
// printable ASCII characters when present.
func idempotencyKey(r *http.Request) (string, error) {
	vs := r.Header.Values("Idempotency-Key")
	switch {
	case len(vs) == 0:
		return "", nil
	case len(vs) > 1:
		return "", errorf(core.Invalid, "Idempotency-Key is given %d times; give it once", len(vs))
	}
	k := vs[0]
	if k == "" || len(k) > maxKeyBytes {
		return "", errorf(core.Invalid, "Idempotency-Key must be 1 to %d characters", maxKeyBytes)
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x21 || k[i] > 0x7e {
			return "", errorf(core.Invalid, "Idempotency-Key must be printable ASCII without spaces")
		}
	}
	return k, nil
}

// scopedKey is the id of a key's record: keys of different users never
// meet, and a record's id says nothing of the key.
func scopedKey(uid, key string) string {
	sum := sha256.Sum256([]byte(uid + "\x00" + key))
	return hex.EncodeToString(sum[:])
}
