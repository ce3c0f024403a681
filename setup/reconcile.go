package setup

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/tallycounters/tally/counter"
	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/extension"
	"github.com/tallycounters/tally/internal/httpjson"
)

// Publisher hands a part of a job to an invocation of its own: a Pub/Sub
// topic whose push subscription delivers it to Reconcile?part
// (fanout.Topic).
type Publisher interface {
	Publish(ctx context.Context, p counter.Part) error
}

// Fan-out modes, as answers and logs name them.
const (
	FanoutPubSub    = "pubsub"     // each part published, and run by an invocation of its own
	FanoutInProcess = "in-process" // each part run here, one after another
)

// DefaultListFor is how long a job lists its documents in one invocation
// (of a function's 540 s at most) before a part goes on with the listing.
const DefaultListFor = 7 * time.Minute

// jobs is the Reconcile HTTP function, for a scheduler and for Pub/Sub.
type jobs struct {
	c        *counter.Client
	log      *slog.Logger
	pub      Publisher // nil: parts run in-process
	partSize int
	listFor  time.Duration
	// sweep, if set, moves what the firestore-counter extension's shards
	// still hold, those no event brought a move to (package extension):
	// Reconcile runs it too.
	sweep func(context.Context) (extension.Report, error)
}

// reconcileHandler is the Reconcile HTTP function. A POST is Reconcile
// (every counter folded, each drift logged); a POST to ?windows is the
// boundary job, which a scheduler runs at each start of a bucket of the
// windows declared. Each lists its documents in parts of at most partSize
// and, with a publisher, publishes them and answers; without, runs them
// here. A POST to ?part is a part, as a push subscription delivers it.
func reconcileHandler(j *jobs) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Origin") != "" { // a web page's request: the scheduler and Pub/Sub send no Origin
			httpjson.WriteError(w, core.Errorf(core.Forbidden, "Reconcile is for a scheduler, not for web pages"))
			return
		}
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", "POST")
			httpjson.WriteError(w, httpjson.Refuse(http.StatusMethodNotAllowed, "use POST"))
			return
		}
		switch q := r.URL.Query(); {
		case q.Has("part"):
			j.part(w, r)
		case q.Has("windows"):
			j.start(w, r, counter.JobWindows)
		default:
			j.start(w, r, counter.JobReconcile)
		}
	})
}

// JobReport is the answer to a POST that starts a job: what its listing
// found and, when its parts ran here, what they did.
type JobReport struct {
	Job    string    `json:"job"`
	At     time.Time `json:"at"`
	Fanout string    `json:"fanout"` // FanoutPubSub or FanoutInProcess
	Due    int       `json:"due"`    // documents listed: due at a boundary, or counters to reconcile
	Parts  int       `json:"parts"`
	More   bool      `json:"more,omitempty"` // the listing goes on in a part of its own
	// The parts' totals, when they ran here.
	Moved    int             `json:"moved"`
	Failed   int             `json:"failed"`
	Counters int             `json:"counters,omitempty"` // Reconcile: as due
	Repaired []counter.Drift `json:"repaired,omitempty"` // Reconcile: counters whose total had drifted
	Errors   int             `json:"errors"`             // as failed
	TookMS   int64           `json:"took_ms"`
	// Reconcile with TALLY_EXTENSION_COUNTERS: the extension's shards and
	// partials it found left, and moved.
	ExtensionShards int `json:"extension_shards,omitempty"`
}

// start begins job now: it lists its parts and publishes them, or runs
// them here.
func (j *jobs) start(w http.ResponseWriter, r *http.Request, job string) {
	began := time.Now()
	first := counter.Part{Job: job, At: began, Seq: 1}
	rep := JobReport{Job: job, At: began, Fanout: FanoutPubSub, Repaired: []counter.Drift{}}
	var parts []counter.Part
	emit := func(p counter.Part) error {
		if j.pub == nil {
			parts = append(parts, p)
			return nil
		}
		return j.pub.Publish(r.Context(), p)
	}
	deadline := began.Add(j.listFor)
	if j.pub == nil {
		rep.Fanout, deadline = FanoutInProcess, time.Time{} // listed whole: the parts run here
	}
	split, err := j.c.Split(r.Context(), first, j.partSize, deadline, emit)
	rep.Due, rep.Parts, rep.More = split.Due, split.Parts, split.More
	for _, p := range parts {
		pr, perr := j.c.RunPart(r.Context(), p, j.failed(p))
		rep.Moved, rep.Failed, rep.Repaired = rep.Moved+pr.Moved, rep.Failed+pr.Failed, append(rep.Repaired, pr.Repaired...)
		err = cmpOr(err, perr)
	}
	if job == counter.JobReconcile {
		rep.Counters = rep.Due
		if oerr := j.c.RemoveOrphans(r.Context()); oerr != nil {
			j.log.Error("reconcile: could not remove what tally keeps of deleted documents", "error", oerr.Error())
			err = cmpOr(err, oerr)
		}
		for _, d := range rep.Repaired {
			j.log.Warn("reconcile repaired a drifted total", "counter", d.Counter, "total", d.Total, "sum", d.Sum, "drift", d.Drift)
		}
		if j.sweep != nil {
			rep.ExtensionShards, err = j.swept(r.Context(), err)
		}
	}
	rep.Errors, rep.TookMS = rep.Failed, time.Since(began).Milliseconds()
	code := http.StatusOK
	if err != nil || rep.Failed > 0 {
		code = http.StatusInternalServerError // the scheduler retries (a part already run moves nothing twice)
		j.log.Error("reconcile: "+job+" job", "error", errText(err), "failed", rep.Failed)
	}
	level := slog.LevelInfo
	if rep.Due == 0 {
		level = slog.LevelDebug // a run at a start that is none in the windows' zone, or of a quiet app
	}
	j.log.Log(r.Context(), level, "reconcile: "+job+" job", "job", first.ID(), "fanout", rep.Fanout, "due", rep.Due, "parts", rep.Parts,
		"more", rep.More, "moved", rep.Moved, "failed", rep.Failed, "took_ms", rep.TookMS)
	httpjson.Write(w, code, rep)
}

// swept runs the sweep of the extension's shards, logs what it moved
// and left, and returns how many it found, with err or its own error.
func (j *jobs) swept(ctx context.Context, err error) (int, error) {
	r, serr := j.sweep(ctx)
	for path, why := range r.Left {
		j.log.Warn("reconcile: a shard of the extension's that holds what is not a count is left as it is", "shard", path, "reason", why.Error())
	}
	for doc, why := range r.Failed {
		j.log.Error("reconcile: could not move the extension's shards", "document", doc, "error", why.Error())
		serr = cmpOr(serr, why)
	}
	if n := r.Shards + r.Partials; n > 0 {
		j.log.Warn("reconcile moved the extension's shards no event had", "documents", r.Documents, "shards", r.Shards, "partials", r.Partials)
	}
	return r.Shards + r.Partials, cmpOr(err, serr)
}

// failed logs each document of part p that could not be done.
func (j *jobs) failed(p counter.Part) func(string, error) {
	return func(name string, err error) {
		j.log.Error("reconcile: a document of a part failed", "job", p.ID(), "seq", p.Seq, "counter", name, "error", err.Error())
	}
}

// cmpOr is err, or else def.
func cmpOr(err, def error) error {
	if err != nil {
		return err
	}
	return def
}

// errText is err's text, "" for nil.
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
