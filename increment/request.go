package increment

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/core/calendar"
	"github.com/tallycounters/tally/internal/httpjson"
)

// maxBody bounds a request body: a valid one names one document, whose
// path Firestore bounds at 6 KiB, escaped as JSON.
const maxBody = 16 << 10

// Request is one increment asked for: by to counter (and, for counts on
// documents, its count field), or, with Vote, the caller's vote added
// (true: +1) or taken back (false: -1).
type Request struct {
	Counter string `json:"counter"`
	Field   string `json:"field,omitempty"`
	By      int64  `json:"by"`
	Vote    *bool  `json:"vote,omitempty"`
	// Once, a unit of time (minute, hour, day, week, month), counts the
	// step at most once per signed-in user in each bucket of it.
	Once string `json:"once,omitempty"`
}

// body is the JSON request. By stays raw so that an absent field (which
// means 1) is told apart from 0, and a float from an integer.
type body struct {
	Counter string          `json:"counter"`
	Field   string          `json:"field"`
	By      json.RawMessage `json:"by"`
	Vote    *bool           `json:"vote"`
	Once    string          `json:"once"`
}

// parseRequest reads the counter and step from a JSON body or, when the body
// is empty and the function is not public, from the query string. It only
// parses; limits are checked by validate.
func parseRequest(w http.ResponseWriter, r *http.Request, public bool) (Request, error) {
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return Request{}, httpjson.Refuse(http.StatusRequestEntityTooLarge, "request body is larger than %d bytes", maxBody)
	case err != nil:
		return Request{}, errorf(core.Invalid, "reading request body failed")
	}
	if ce := r.Header.Get("Content-Encoding"); ce != "" && !strings.EqualFold(ce, "identity") {
		return Request{}, httpjson.Refuse(http.StatusUnsupportedMediaType, "Content-Encoding %s is not supported; send the body as it is", truncate(ce))
	}
	query := r.URL.Query()
	if public && (!isJSON(r) || len(bytes.TrimSpace(raw)) == 0) {
		// A cross-site form, or a bodiless POST, needs no CORS preflight:
		// a public Increment takes only what a page must ask to send.
		return Request{}, httpjson.Refuse(http.StatusUnsupportedMediaType, "this Increment is public: send a JSON body with Content-Type: application/json")
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return fromQuery(query)
	}
	if len(query) > 0 {
		return Request{}, errorf(core.Invalid, "give the request in the JSON body or in the query string, not both")
	}
	if !isJSON(r) {
		return Request{}, httpjson.Refuse(http.StatusUnsupportedMediaType, "Content-Type must be application/json")
	}
	return fromJSON(raw)
}

func isJSON(r *http.Request) bool {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && mt == "application/json"
}

// jsonSpace is the white space JSON allows between its tokens: no other.
const jsonSpace = " \t\r\n"

// requestKeys are what a request may give, in its JSON body or its query
// string alike.
var requestKeys = []string{"counter", "field", "by", "vote", "once"}

func fromJSON(raw []byte) (Request, error) {
	if err := exactKeys(raw, requestKeys...); err != nil {
		return Request{}, err
	}
	var b body
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		return Request{}, errorf(core.Invalid, "body is not a JSON object {\"counter\": string, \"by\": integer} or {\"counter\": string, \"vote\": boolean}: %s", jsonProblem(err))
	}
	if len(bytes.TrimLeft(raw[dec.InputOffset():], jsonSpace)) > 0 {
		return Request{}, errorf(core.Invalid, "body holds more than one JSON object, or text after it")
	}
	if !bytes.HasPrefix(bytes.TrimLeft(raw, jsonSpace), []byte("{")) {
		return Request{}, errorf(core.Invalid, "body is not a JSON object {\"counter\": string, \"by\": integer} or {\"counter\": string, \"vote\": boolean}")
	}
	req := Request{Counter: b.Counter, Field: b.Field, By: 1, Vote: b.Vote, Once: b.Once}
	if b.Vote != nil && b.Once != "" {
		return Request{}, errorf(core.Invalid, "give vote or once, not both: a vote counts once per user already")
	}
	if b.Vote != nil {
		if len(b.By) > 0 {
			return Request{}, errorf(core.Invalid, "give by or vote, not both: a vote adds 1, or takes 1 back")
		}
		if !*b.Vote {
			req.By = -1
		}
		return req, nil
	}
	if len(b.By) > 0 {
		n, err := strconv.ParseInt(string(b.By), 10, 64)
		if err != nil {
			return Request{}, errorf(core.Invalid, "by must be an integer, got %s", truncate(string(b.By)))
		}
		req.By = n
	}
	return req, nil
}

// fromQuery reads a request from the query string: the keys of the body,
// spelled exactly, each once, vote true or false as in JSON.
func fromQuery(q url.Values) (Request, error) {
	for key, vs := range q {
		if !slices.Contains(requestKeys, key) {
			return Request{}, errorf(core.Invalid, "unknown key %q in the query string; the keys are %q (lower case)", truncate(key), requestKeys)
		}
		if len(vs) > 1 {
			return Request{}, errorf(core.Invalid, "%s is given %d times in the query string; give it once", truncate(key), len(vs))
		}
	}
	req := Request{Counter: q.Get("counter"), Field: q.Get("field"), By: 1, Once: q.Get("once")}
	if q.Has("vote") && q.Has("once") {
		return Request{}, errorf(core.Invalid, "give vote or once, not both: a vote counts once per user already")
	}
	if q.Has("vote") {
		if q.Has("by") {
			return Request{}, errorf(core.Invalid, "give by or vote, not both: a vote adds 1, or takes 1 back")
		}
		v := q.Get("vote")
		if v != "true" && v != "false" {
			return Request{}, errorf(core.Invalid, "vote must be true or false, got %q", truncate(v))
		}
		vote := v == "true"
		req.Vote = &vote
		if !vote {
			req.By = -1
		}
		return req, nil
	}
	if q.Has("by") {
		n, err := strconv.ParseInt(q.Get("by"), 10, 64)
		if err != nil {
			return Request{}, errorf(core.Invalid, "by must be an integer, got %q", truncate(q.Get("by")))
		}
		req.By = n
	}
	return req, nil
}

// validate resolves the count the request names in l and bounds |by| by
// maxStep.
func (req Request) validate(l core.Layout, maxStep int64) (core.Count, error) {
	c, err := l.Check(req.Counter, req.Field)
	if err == nil {
		err = ValidateStep(req.By, maxStep)
	}
	if err == nil && req.Once != "" {
		if _, uerr := calendar.ParseUnit(req.Once); uerr != nil {
			err = fmt.Errorf("once: %w", uerr)
		}
	}
	if err != nil {
		return core.Count{}, errorf(core.Invalid, "%v", err)
	}
	return c, nil
}

// ValidateStep checks a step as the Increment function does: neither 0
// nor past ±maxStep. The tally command checks its own increments with it.
func ValidateStep(by, maxStep int64) error {
	if by == 0 {
		return errors.New("by must not be 0")
	}
	if by > maxStep || by < -maxStep {
		return fmt.Errorf("by must be between -%d and %d", maxStep, maxStep)
	}
	return nil
}

// jsonProblem describes a decoding error without echoing the input.
func jsonProblem(err error) string {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		return fmt.Sprintf("syntax error at byte %d", syntax.Offset)
	case errors.As(err, &typ):
		return fmt.Sprintf("field %q must be a %s", typ.Field, typ.Type)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "unexpected end of input"
	}
	return err.Error()
}

func truncate(s string) string {
	if len(s) > 32 {
		return s[:32] + "..."
	}
	return s
}
