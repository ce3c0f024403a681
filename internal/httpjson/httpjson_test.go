package httpjson

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tallycounters/tally/internal/core"
)

// TestEveryCodeHasItsStatus: each code is answered with the status its
// declaration gives, and none falls through to 0.
func TestEveryCodeHasItsStatus(t *testing.T) {
	want := map[core.Code]int{
		core.Internal: 500, core.Invalid: 400, core.Unauthenticated: 401, core.Forbidden: 403,
		core.NotFound: 404, core.Conflict: 422, core.TooMany: 429, core.Unavailable: 503, core.OutcomeUnknown: 504, core.OutOfRange: 422,
	}
	for code := core.Internal; code <= core.OutcomeUnknown; code++ {
		if got, _, _ := Answer(core.Errorf(code, "x")); got != want[code] || got == 0 {
			t.Errorf("code %d: status %d, want %d", code, got, want[code])
		}
	}
}

// TestWriteError: the answer's status, JSON body and headers, for errors
// of tally's own, wrapped or not, of Firestore's client and of anything
// else, whose text stays in the logs.
func TestWriteError(t *testing.T) {
	for _, tc := range []struct {
		err        error
		status     int
		msg        string
		retryAfter string
	}{
		{core.Errorf(core.Invalid, "counter is required"), 400, "counter is required", ""},
		{fmt.Errorf("wrapped: %w", &core.Error{Code: core.TooMany, Message: "slow down", RetryAfter: 1500 * time.Millisecond}), 429, "slow down", "2"},
		{fmt.Errorf("read: %w", core.ErrNoCounter), 404, core.ErrNoCounter.Error(), ""},
		{status.Error(codes.Unavailable, "backend"), 503, "Firestore is unavailable: nothing was written; retry after the time in Retry-After", "1"},
		{errors.New("secret detail"), 500, "internal error: nothing was written", ""},
		{fmt.Errorf("read: %w", Refuse(http.StatusUnsupportedMediaType, "Content-Type must be %s", "application/json")), 415, "Content-Type must be application/json", ""},
	} {
		w := httptest.NewRecorder()
		WriteError(w, tc.err)
		var body struct{ Error string }
		if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
			t.Fatalf("%v: body %q: %v", tc.err, w.Body, err)
		}
		if w.Code != tc.status || body.Error != tc.msg || w.Header().Get("Retry-After") != tc.retryAfter {
			t.Errorf("%v: %d %q Retry-After %q; want %d %q %q", tc.err, w.Code, body.Error, w.Header().Get("Retry-After"), tc.status, tc.msg, tc.retryAfter)
		}
		if ct := w.Header().Get("Content-Type"); ct != "application/json; charset=utf-8" {
			t.Errorf("%v: Content-Type %q", tc.err, ct)
		}
	}
	w := httptest.NewRecorder()
	WriteError(w, core.Errorf(core.Unauthenticated, "sign in"))
	if w.Code != http.StatusUnauthorized || w.Header().Get("WWW-Authenticate") == "" {
		t.Errorf("401: %d, WWW-Authenticate %q", w.Code, w.Header().Get("WWW-Authenticate"))
	}
}
