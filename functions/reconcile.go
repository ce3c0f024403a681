package functions

import (
	"log/slog"
	"net/http"

	"github.com/tallycounters/tally/counter"
	"github.com/tallycounters/tally/counting"
	"github.com/tallycounters/tally/internal/httpjson"
)

// ReconcileReport is the answer of the Reconcile function.
type ReconcileReport struct {
	Counters int              `json:"counters"`
	Repaired []counting.Drift `json:"repaired"` // counters whose total had drifted
	Errors   int              `json:"errors"`
}

// reconcileHandler is the Reconcile HTTP function, for a scheduler: a POST
// reconciles every counter, logs each drift, and answers with a report.
func reconcileHandler(c *counter.Client, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Origin") != "" { // a web page's request: the scheduler sends no Origin
			httpjson.WriteError(w, counting.Errorf(counting.Forbidden, "Reconcile is for a scheduler, not for web pages"))
			return
		}
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", "POST")
			httpjson.WriteError(w, counting.Errorf(counting.MethodNotAllowed, "use POST"))
			return
		}
		rep := ReconcileReport{Repaired: []counting.Drift{}}
		err := c.ReconcileAll(r.Context(), func(d counting.Drift, err error) {
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
