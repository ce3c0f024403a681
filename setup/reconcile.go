package setup

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/tallycounters/tally/counter"
	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/httpjson"
)

// ReconcileReport is the answer of the Reconcile function.
type ReconcileReport struct {
	Counters int          `json:"counters"`
	Repaired []core.Drift `json:"repaired"` // counters whose total had drifted
	Errors   int          `json:"errors"`
}

// reconcileHandler is the Reconcile HTTP function, for a scheduler: a POST
// reconciles every counter, logs each drift, and answers with a report; a
// POST to ?windows is the boundary job (counter.Client.MoveWindows), which
// a scheduler runs at each start of a bucket of the windows declared.
func reconcileHandler(c *counter.Client, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Origin") != "" { // a web page's request: the scheduler sends no Origin
			httpjson.WriteError(w, core.Errorf(core.Forbidden, "Reconcile is for a scheduler, not for web pages"))
			return
		}
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", "POST")
			httpjson.WriteError(w, httpjson.Refuse(http.StatusMethodNotAllowed, "use POST"))
			return
		}
		if r.URL.Query().Has("windows") {
			moveWindows(w, r, c, log)
			return
		}
		rep := ReconcileReport{Repaired: []core.Drift{}}
		err := c.ReconcileAll(r.Context(), func(d core.Drift, err error) {
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

// moveWindows answers a POST to ?windows: the boundary job, now.
func moveWindows(w http.ResponseWriter, r *http.Request, c *counter.Client, log *slog.Logger) {
	rep, err := c.MoveWindows(r.Context(), time.Now(), func(id string, err error) {
		log.Error("reconcile: could not move the windows of a counter at a boundary", "counter", id, "error", err.Error())
	})
	code := http.StatusOK
	if err != nil || rep.Errors > 0 {
		code = http.StatusInternalServerError // the scheduler retries, within the retention
	}
	log.Info("reconcile: windows moved at a boundary", "due", rep.Due, "moved", rep.Moved, "errors", rep.Errors, "took_ms", rep.TookMS)
	httpjson.Write(w, code, rep)
}
