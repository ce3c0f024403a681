package increment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// httpError is an error whose message is safe to show a client.
type httpError struct {
	status int
	msg    string
}

func (e *httpError) Error() string { return e.msg }

func errorf(status int, format string, args ...any) error {
	return &httpError{status: status, msg: fmt.Sprintf(format, args...)}
}

// statusOf maps any error to the status and message a client sees. Internal
// errors keep their text to the logs.
func statusOf(err error) (int, string) {
	var he *httpError
	if errors.As(err, &he) {
		return he.status, he.msg
	}
	if errors.Is(err, ErrNotFound) {
		return http.StatusNotFound, "counter does not exist"
	}
	switch status.Code(err) {
	case codes.Unavailable, codes.DeadlineExceeded, codes.ResourceExhausted, codes.Aborted:
		return http.StatusServiceUnavailable, "Firestore is unavailable, try again"
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return http.StatusServiceUnavailable, "Firestore is unavailable, try again"
	}
	return http.StatusInternalServerError, "internal error"
}

// WriteError answers with err as JSON {"error": "..."}.
func WriteError(w http.ResponseWriter, err error) {
	code, msg := statusOf(err)
	writeJSON(w, code, map[string]string{"error": msg})
}

// encode is v as the JSON body of an answer.
func encode(v any) []byte {
	b, _ := json.Marshal(v)
	return append(b, '\n')
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if code == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="tally"`)
	}
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}
