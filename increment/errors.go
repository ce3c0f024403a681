package increment

import (
	"errors"
	"time"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/httpjson"
)

// errorf is a failure of code whose message the caller sees as it is.
func errorf(code core.Code, format string, args ...any) error {
	return core.Errorf(code, format, args...)
}

// What an increment whose outcome is unknown was.
const (
	opPlain = iota // a plain step: not safe to retry
	opKey          // with an Idempotency-Key: safe to retry with the same key
	opVote         // a vote: safe to retry
)

// errBusy refuses a request before anything is written: this instance
// works on as many as it takes.
var errBusy = &core.Error{Code: core.Unavailable, RetryAfter: time.Second,
	Message: "this Increment instance is busy: nothing was written; retry after the time in Retry-After"}

var unknownMessages = map[int]string{
	opPlain: "the increment may have been applied: Firestore did not confirm it; a retry may count it twice " +
		"(send an Idempotency-Key to make retries safe)",
	opKey:  "the increment may have been applied: Firestore did not confirm it; retry with the same Idempotency-Key: it counts once",
	opVote: "the vote may have been applied: Firestore did not confirm it; retrying the vote is safe: a vote counts once",
}

// commitError is err, the failure of a commit of op sent to Firestore: of
// unknown outcome (core.OutcomeUnknown, saying which retry is safe)
// unless its code says the commit was refused whole, and nothing written.
func commitError(op int, err error) error {
	if errors.Is(core.Unconfirmed(err), core.ErrOutcomeUnknown) {
		return &core.Error{Code: core.OutcomeUnknown, Message: unknownMessages[op], Err: err}
	}
	return err
}

// plainError is the failure of a plain step: of unknown outcome, it says
// so as a plain step's.
func plainError(err error) error {
	if errors.Is(err, core.ErrOutcomeUnknown) {
		return &core.Error{Code: core.OutcomeUnknown, Message: unknownMessages[opPlain], Err: err}
	}
	return err
}

// encode is v as the JSON body of an answer.
func encode(v any) []byte { return httpjson.Encode(v) }
