package setup

import (
	"errors"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/tallycounters/tally/counter"
	"github.com/tallycounters/tally/internal/fanout"
	"github.com/tallycounters/tally/internal/fold"
	"github.com/tallycounters/tally/internal/fsrpc"
	"github.com/tallycounters/tally/internal/httpjson"
)

// part runs the part a push subscription delivered: its documents, or
// the rest of its job's listing. It answers 200, which acknowledges the
// message, once every document of the part is done, or failed for good (a
// failure no delivery again cures: logged, as is each document's), or
// for a message that is no part (logged, and dropped: sent again it would
// fail again); and 500 if a document failed for a reason a retry may
// cure, for Pub/Sub to deliver the part again, alone.
func (j *jobs) part(w http.ResponseWriter, r *http.Request) {
	p, id, err := fanout.Decode(r.Body)
	if err == nil {
		err = j.c.CheckPart(p)
	}
	if err != nil {
		j.log.Error("reconcile: a message that is no part of a job, dropped", "message", id, "error", err.Error())
		httpjson.Write(w, http.StatusOK, map[string]string{"dropped": err.Error()})
		return
	}
	if p.After != nil {
		j.goOn(w, r, p)
		return
	}
	var retry atomic.Int64 // documents whose failure a delivery again may cure
	rep, err := j.c.RunPart(r.Context(), p, func(name string, err error) {
		j.failed(p)(name, err)
		if !forGood(err) {
			retry.Add(1)
		}
	})
	code := http.StatusOK
	switch {
	case err != nil || retry.Load() > 0:
		code = http.StatusInternalServerError
		j.log.Error("reconcile: a part failed, to be delivered again", "job", p.ID(), "seq", p.Seq, "failed", rep.Failed, "error", errText(err))
	case rep.Failed > 0:
		j.log.Error("reconcile: a part's documents failed for good: it is not delivered again", "job", p.ID(), "seq", p.Seq, "failed", rep.Failed)
	}
	for _, d := range rep.Repaired {
		j.log.Warn("reconcile repaired a drifted total", "counter", d.Counter, "total", d.Total, "sum", d.Sum, "drift", d.Drift)
	}
	j.log.Info("reconcile: part done", "job", p.ID(), "seq", p.Seq, "message", id, "due", rep.Due, "moved", rep.Moved,
		"failed", rep.Failed, "took_ms", rep.TookMS)
	httpjson.Write(w, code, rep)
}

// goOn goes on with the listing of p's job, and publishes its parts.
func (j *jobs) goOn(w http.ResponseWriter, r *http.Request, p counter.Part) {
	if j.pub == nil {
		httpjson.Write(w, http.StatusOK, map[string]string{"dropped": "no topic to publish parts to (TALLY_PARTS_TOPIC)"})
		return
	}
	began := time.Now()
	split, err := j.c.Split(r.Context(), p, j.partSize, began.Add(j.listFor), func(p counter.Part) error {
		return j.pub.Publish(r.Context(), p)
	})
	code := http.StatusOK
	if err != nil {
		code = http.StatusInternalServerError // delivered again: the parts published twice move nothing twice
		j.log.Error("reconcile: the listing of a job failed, to be delivered again", "job", p.ID(), "error", err.Error())
	}
	j.log.Info("reconcile: "+p.Job+" job listed on", "job", p.ID(), "due", split.Due, "parts", split.Parts, "more", split.More,
		"took_ms", time.Since(began).Milliseconds())
	httpjson.Write(w, code, JobReport{Job: p.Job, At: p.At, Fanout: FanoutPubSub, Due: split.Due, Parts: split.Parts,
		More: split.More, TookMS: time.Since(began).Milliseconds()})
}

// forGood reports whether a document's failure in a part is one no
// delivery again cures: Firestore's refusal of the request itself, or a
// counter whose shards hold no shard field.
func forGood(err error) bool {
	return fsrpc.Permanent(err) || errors.Is(err, fold.ErrNoShardField)
}
