package increment

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tallycounters/tally/increment/shard"
	"github.com/tallycounters/tally/internal/httpjson"
)

// httpError is an error whose message is safe to show a client.
type httpError struct {
	status     int
	msg        string
	retryAfter int           // seconds, for Retry-After; 0 for none
	wait       time.Duration // a limit's refusal: how long exactly until it admits one more
}

func (e *httpError) Error() string { return e.msg }

func errorf(status int, format string, args ...any) error {
	return &httpError{status: status, msg: fmt.Sprintf(format, args...)}
}

// ErrOutcomeUnknown is wrapped by the error of an increment whose commit was
// sent to Firestore but not confirmed: it may or may not have been applied.
// Retrying it blindly may count it twice; a retry with the same
// Idempotency-Key, or of a vote, cannot.
var ErrOutcomeUnknown = shard.ErrOutcomeUnknown

// What an increment whose outcome is unknown was.
const (
	opPlain = iota // a plain step: not safe to retry
	opKey          // with an Idempotency-Key: safe to retry with the same key
	opVote         // a vote: safe to retry
)

// unknownOutcome is the error of a commit that may have been applied.
type unknownOutcome struct {
	op  int
	err error
}

func (e *unknownOutcome) Error() string   { return ErrOutcomeUnknown.Error() + ": " + e.err.Error() }
func (e *unknownOutcome) Unwrap() []error { return []error{ErrOutcomeUnknown, e.err} }

// commitError is err, the failure of a commit of op sent to Firestore,
// marked as of unknown outcome unless its code says the commit was refused
// whole: then nothing was written.
func commitError(op int, err error) error {
	if errors.Is(shard.Unconfirmed(err), ErrOutcomeUnknown) {
		return &unknownOutcome{op: op, err: err}
	}
	return err
}

// Messages of the answers that say whether a retry is safe.
const (
	msgUnavailable = "Firestore is unavailable: nothing was written; retry after the time in Retry-After"
	msgBusy        = "this Increment instance is busy: nothing was written; retry after the time in Retry-After"
)

var unknownMessages = map[int]string{
	opPlain: "the increment may have been applied: Firestore did not confirm it; a retry may count it twice " +
		"(send an Idempotency-Key to make retries safe)",
	opKey:  "the increment may have been applied: Firestore did not confirm it; retry with the same Idempotency-Key: it counts once",
	opVote: "the vote may have been applied: Firestore did not confirm it; retrying the vote is safe: a vote counts once",
}

// answerOf maps any error to the answer a client sees: its status, its
// message, and for a refusal the seconds to wait before a retry. Internal
// errors keep their text to the logs. Every answer is true: a refusal (429,
// 503) is given only when nothing was written, and a commit that may have
// been applied is answered 504, never as a refusal.
func answerOf(err error) (code int, msg string, retryAfter int) {
	var he *httpError
	var uo *unknownOutcome
	switch {
	case errors.As(err, &he):
		return he.status, he.msg, he.retryAfter
	case errors.As(err, &uo):
		return http.StatusGatewayTimeout, unknownMessages[uo.op], 0
	case errors.Is(err, ErrOutcomeUnknown): // a plain step's (shard.Adder)
		return http.StatusGatewayTimeout, unknownMessages[opPlain], 0
	case errors.Is(err, shard.ErrNoTime):
		return http.StatusServiceUnavailable, msgUnavailable, 1
	case errors.Is(err, ErrNotFound):
		return http.StatusNotFound, "counter does not exist", 0
	}
	switch status.Code(err) {
	case codes.Unavailable, codes.DeadlineExceeded, codes.ResourceExhausted, codes.Aborted:
		return http.StatusServiceUnavailable, msgUnavailable, 1
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return http.StatusServiceUnavailable, msgUnavailable, 1
	}
	return http.StatusInternalServerError, "internal error: nothing was written", 0
}

// WriteError answers with err as JSON {"error": "..."}, with Retry-After on
// a refusal that gives one.
func WriteError(w http.ResponseWriter, err error) {
	code, msg, after := answerOf(err)
	if after > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(after))
	}
	writeJSON(w, code, map[string]string{"error": msg})
}

// encode is v as the JSON body of an answer.
func encode(v any) []byte { return httpjson.Encode(v) }

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Cache-Control", "no-store")
	if code == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="tally"`)
	}
	httpjson.Write(w, code, v)
}
