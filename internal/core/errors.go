package core

import (
	"errors"
	"fmt"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Code is the kind of a failure that a caller should tell apart. The
// functions' HTTP edge answers each with a status of its choosing
// (internal/httpjson); the Go client returns the errors as they are.
type Code int

// The codes.
const (
	Internal        Code = iota // anything else
	Invalid                     // the request is wrong
	Unauthenticated             // no valid credentials
	Forbidden                   // the caller may not
	NotFound                    // no such counter or document
	Conflict                    // an Idempotency-Key sent before with another request
	TooMany                     // past a limit; nothing was written
	Unavailable                 // nothing was written; a retry may succeed
	OutcomeUnknown              // sent and not confirmed: it may have been applied
	OutOfRange                  // it would take a count past what it holds (CountEdge); nothing was written
)

// Error is a failure whose Message may be shown to a caller, as it is. Its
// cause, Err, is for the logs only.
type Error struct {
	Code       Code
	Message    string
	RetryAfter time.Duration // a refusal's wait before a retry may succeed, exactly; 0 for none
	Err        error
}

// Errorf is an Error of code with the message format makes.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

func (e *Error) Error() string {
	if e.Err != nil {
		return e.Message + ": " + e.Err.Error()
	}
	return e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// Is makes every Error of code OutcomeUnknown match ErrOutcomeUnknown.
func (e *Error) Is(target error) bool { return target == ErrOutcomeUnknown && e.Code == OutcomeUnknown }

// ErrNoCounter means a counter's parent document does not exist. The
// packages that report it all return this one value, so errors.Is works
// whichever of them a caller used.
var ErrNoCounter = errors.New("counter does not exist")

// ErrPastLimit is wrapped by the error of a step that would take a count,
// or the shard it would be written to, past ±CountEdge: nothing was
// written.
var ErrPastLimit = errors.New("core: past the most a count holds")

// WithinEdge reports whether c + by stays within ±CountEdge.
func WithinEdge(c, by int64) bool {
	return by >= 0 && c <= CountEdge-by || by < 0 && c >= -CountEdge-by
}

// ErrNoTime refuses, before anything is written, an increment whose
// context leaves less than MinCommitTime for its commit.
var ErrNoTime = errors.New("core: too little time left to commit: nothing was written")

// ErrOutcomeUnknown is matched by the error of an increment whose commit
// was sent to Firestore but not confirmed: it may or may not have been
// applied. Retrying it blindly may count it twice; a retry with the same
// Idempotency-Key, or of a vote, cannot.
var ErrOutcomeUnknown = errors.New("core: the commit was sent and not confirmed: it may have been applied")

// Unconfirmed is err, the failure of a commit sent to Firestore, as an
// Error of code OutcomeUnknown unless its code says the commit was refused
// whole: then nothing was written, and it is err.
func Unconfirmed(err error) error {
	switch status.Code(err) {
	case codes.InvalidArgument, codes.NotFound, codes.AlreadyExists, codes.PermissionDenied, codes.FailedPrecondition,
		codes.Aborted, codes.OutOfRange, codes.Unimplemented, codes.Unauthenticated, codes.ResourceExhausted:
		return err
	}
	return &Error{Code: OutcomeUnknown, Message: "the commit was sent and not confirmed: it may have been applied", Err: err}
}
