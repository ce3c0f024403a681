package rollup

import (
	"bytes"
	"errors"
	"io"
	"net/http"

	cehttp "github.com/cloudevents/sdk-go/v2/protocol/http"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/httpjson"
)

// MaxEventBytes is the largest event Eventarc delivers: 512 KiB. A larger
// body cannot be one of its events.
const MaxEventBytes = 512 << 10

// ServeHTTP is the Rollup function as Eventarc calls it: a POST of one
// CloudEvent, binary mode with the protobuf as its body. The event is read
// with the CloudEvents SDK's HTTP binding; the SDK's receive handler is not
// used, because its shared hand-off channel stalls requests once a client
// cancels one (cloudevents/sdk-go issues 1224 and 1332): an event could then
// wait for the next one to arrive before any fold runs.
//
// It answers 204 once a fold covers the event, or when the event is dropped
// (malformed, foreign, or dated in the future: logged, never retried); 503
// when no fold could be made in time, so that the platform retries; 403,
// 405 and 413 to what cannot be an Eventarc delivery at all (403: a web
// page's request, which carries an Origin).
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if origin := r.Header.Get("Origin"); origin != "" {
		// Eventarc sends no Origin; a browser does, for any page's request.
		httpjson.WriteError(w, core.Errorf(core.Forbidden, "Rollup takes events from Eventarc, not from web pages"))
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		httpjson.WriteError(w, httpjson.Refuse(http.StatusMethodNotAllowed, "use POST"))
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxEventBytes))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		h.log.Error("rollup: refusing a body over 512 KiB", "event_id", r.Header.Get("ce-id"))
		httpjson.WriteError(w, httpjson.Refuse(http.StatusRequestEntityTooLarge, "an event is at most 512 KiB"))
		return
	case err != nil:
		httpjson.WriteError(w, core.Errorf(core.Invalid, "reading the body failed"))
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	e, err := cehttp.NewEventFromHTTPRequest(r)
	if err != nil {
		h.log.Error("rollup: dropping event", "event_id", r.Header.Get("ce-id"), "error", "not a CloudEvent: "+err.Error())
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if err := h.Handle(r.Context(), *e); err != nil {
		httpjson.WriteError(w, &core.Error{Code: core.Unavailable, Message: "no fold covered the event in time; retry", Err: err})
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
