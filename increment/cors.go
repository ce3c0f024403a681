package increment

import (
	"net/http"
	"slices"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/httpjson"
)

// cors answers browsers calling from the configured origins.
type cors struct {
	origins []string
	any     bool
}

func newCORS(origins []string) cors {
	return cors{origins: origins, any: slices.Contains(origins, "*")}
}

func (c cors) allows(origin string) bool {
	return origin != "" && (c.any || slices.Contains(c.origins, origin))
}

// handle sets the CORS headers for an allowed origin and answers a preflight
// request itself, in which case it returns true. A request from a page of
// an origin not allowed is refused, 403, before anything is written, and
// it returns true: a browser sends some requests of any page (a form, a
// bodiless POST) without asking first, and only hides the answer. A
// request with no Origin comes from no page: a server, a script.
func (c cors) handle(w http.ResponseWriter, r *http.Request) bool {
	origin := r.Header.Get("Origin")
	preflight := r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != ""
	if !c.allows(origin) {
		switch {
		case preflight:
			httpjson.WriteError(w, errorf(core.Forbidden, "origin %q is not allowed", origin))
		case origin != "":
			httpjson.WriteError(w, errorf(core.Forbidden, "pages of origin %q may not call this Increment (TALLY_CORS_ORIGINS): nothing was written", truncate(origin)))
			return true
		}
		return preflight
	}
	h := w.Header()
	h.Add("Vary", "Origin")
	h.Set("Access-Control-Allow-Origin", origin)
	h.Set("Access-Control-Expose-Headers", "Retry-After") // read on the answer itself, not the preflight's
	if !preflight {
		return false
	}
	h.Set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
	h.Set("Access-Control-Allow-Headers", "Content-Type, Authorization, Idempotency-Key, "+HeaderAppCheck)
	h.Set("Access-Control-Max-Age", "3600")
	w.WriteHeader(http.StatusNoContent)
	return true
}
