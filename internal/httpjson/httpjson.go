// Package httpjson writes the JSON that tally's functions and command
// answer with: one value a line, with <, > and & as they are, not escaped
// for HTML, since people read these answers in curl and terminals. It is
// where a failure's code (core.Code) becomes an HTTP status, for every
// function alike (WriteError), and where a request of the wrong shape for
// HTTP (method, size, media type) is refused with its own (Refusal).
package httpjson

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tallycounters/tally/internal/core"
)

// Encode is v as one line of JSON, newline included.
func Encode(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return []byte("null\n")
	}
	return b.Bytes()
}

// Write answers with status code and v as the JSON body.
func Write(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(code)
	w.Write(Encode(v))
}

// Error answers with status code and {"error": msg}.
func Error(w http.ResponseWriter, code int, msg string) {
	Write(w, code, map[string]string{"error": msg})
}

// statuses is the status each kind of failure is answered with: the one
// mapping of tally's functions.
var statuses = map[core.Code]int{
	core.Internal:        http.StatusInternalServerError,
	core.Invalid:         http.StatusBadRequest,
	core.Unauthenticated: http.StatusUnauthorized,
	core.Forbidden:       http.StatusForbidden,
	core.NotFound:        http.StatusNotFound,
	core.Conflict:        http.StatusUnprocessableEntity,
	core.TooMany:         http.StatusTooManyRequests,
	core.Unavailable:     http.StatusServiceUnavailable,
	core.OutcomeUnknown:  http.StatusGatewayTimeout,
	core.OutOfRange:      http.StatusUnprocessableEntity,
}

// Refusal is a request refused for its shape as HTTP, before anything of
// it is read as a count: its status (405, 413, 415, ...) and a message a
// caller may see.
type Refusal struct {
	Status  int
	Message string
}

// Refuse is a Refusal with status and the message format makes.
func Refuse(status int, format string, args ...any) *Refusal {
	return &Refusal{Status: status, Message: fmt.Sprintf(format, args...)}
}

func (r *Refusal) Error() string { return r.Message }

// Answer is how err is answered: its status, the message a caller may
// see (a Refusal's, or see describe), and the whole seconds of
// its Retry-After (0: none).
func Answer(err error) (status int, msg string, retryAfter int) {
	if r := (*Refusal)(nil); errors.As(err, &r) {
		return r.Status, r.Message, 0
	}
	code, msg, wait := describe(err)
	if wait > 0 {
		retryAfter = max(1, int(math.Ceil(wait.Seconds())))
	}
	return statuses[code], msg, retryAfter
}

// WriteError answers with err as {"error": "..."}, its status, and its
// Retry-After if it gives one; a 401 says how to authenticate.
func WriteError(w http.ResponseWriter, err error) {
	status, msg, after := Answer(err)
	h := w.Header()
	if after > 0 {
		h.Set("Retry-After", strconv.Itoa(after))
	}
	if status == http.StatusUnauthorized {
		h.Set("WWW-Authenticate", `Bearer realm="tally"`)
	}
	h.Set("Cache-Control", "no-store")
	Error(w, status, msg)
}

// Messages of the failures that no Error describes.
const (
	msgUnavailable = "Firestore is unavailable: nothing was written; retry after the time in Retry-After"
	msgInternal    = "internal error: nothing was written"
)

// describe is what a caller may be told of err: its code, a message safe
// to show, and how long to wait before a retry (0: none said). An Error
// says it itself; the errors of package core, of Firestore's client and
// of a context that ended have their own; anything else is Internal, its
// text kept to the logs.
func describe(err error) (core.Code, string, time.Duration) {
	var e *core.Error
	switch {
	case errors.As(err, &e):
		return e.Code, e.Message, e.RetryAfter
	case errors.Is(err, core.ErrNoTime):
		return core.Unavailable, msgUnavailable, time.Second
	case errors.Is(err, core.ErrNoCounter):
		return core.NotFound, core.ErrNoCounter.Error(), 0
	case errors.Is(err, context.DeadlineExceeded):
		return core.Unavailable, msgUnavailable, time.Second
	}
	switch status.Code(err) {
	case codes.Unavailable, codes.DeadlineExceeded, codes.ResourceExhausted, codes.Aborted:
		return core.Unavailable, msgUnavailable, time.Second
	}
	return core.Internal, msgInternal, 0
}
