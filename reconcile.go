package tally

import (
	"log/slog"
	"net/http"

	"github.com/tallycounters/tally/counter"
	"github.com/tallycounters/tally/internal/httpjson"
	"github.com/tallycounters/tally/rollup/fold"
)

// ReconcileReport is the answer of the Reconcile function.
type ReconcileReport struct {
	Counters int          `json:"counters"`
	Repaired []fold.Drift `json:"repaired"` // counters whose total had drifted
	Errors   int          `json:"errors"`
}

// reconcileHandler is the Reconcile HTTP function, for a scheduler: a POST
// reconciles every counter, logs each drift, and answers with a report.
func reconcileHandler(c *counter.Client, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Origin") != "" { // a web page's request: the scheduler sends no Origin
			httpjson.Error(w, http.StatusForbidden, "Reconcile is for a scheduler, not for web pages")
			return
		}
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", "POST")
			httpjson.Error(w, http.StatusMethodNotAllowed, "use POST")
			return
		}
		rep := ReconcileReport{Repaired: []fold.Drift{}}
		err := c.ReconcileAll(r.Context(), func(d fold.Drift, err error) {
			rep.Counters++
			switch {
			case err != nil:
				rep.Errors++
				log.Error("reconcile failed", "counter", d.Counter, "error", err.Error())
			case d.Drift != 0:
				rep.Repaired = append(rep.Repaired, d)
				log.Warn("reconcile repaired a drifted total", "counter", d.Counter, "total", d.Total, "sum", d.Sum, "drift", d.Drift)
			}
		})
		code := http.StatusOK
		if err != nil {
			code = http.StatusInternalServerError // the scheduler retries
		}
		httpjson.Write(w, code, rep)
	})
}
