package bench

import (
	"context"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"

	"cloud.google.com/go/firestore"
	"github.com/cloudevents/sdk-go/v2/event"

	"github.com/tallycounters/tally/internal/tools/bench/report"
	"github.com/tallycounters/tally/internal/tools/eventarc"
)

// changer is the load of run: each call changes one comment of the post it
// is given, on the mode's own client: it creates one (half the time, and
// always on a post with none), edits one (a quarter) or deletes one (a
// quarter). A comment being edited or deleted is held by that change
// alone. With direct delivery, the change's event is sent at once.
func (e *env) changer(run *aggRun) incrementFunc {
	c := e.clients[run.mode]
	return func(ctx context.Context, postID string, _ int64) (answer, error) {
		i := run.index[postID]
		comments := c.Collection(run.coll).Doc(postID).Collection(aggChild)
		run.mu.Lock()
		live := run.live[i]
		op := rand.Float64()
		var id string
		if op >= .5 && len(live) > 0 {
			k := rand.IntN(len(live))
			id = live[k]
			live[k] = live[len(live)-1]
			run.live[i] = live[:len(live)-1]
		}
		run.mu.Unlock()
		ch := change{post: i, child: id}
		var err error
		var wr *firestore.WriteResult
		switch {
		case id == "":
			ref := comments.NewDoc()
			ch.child, ch.delta = ref.ID, 1
			wr, err = ref.Create(ctx, map[string]any{"text": "a comment", "n": 1})
		case op < .75:
			// The edit's time makes every edit a change: a write that changes
			// nothing has no event, and the settle waits for one per change.
			wr, err = comments.Doc(id).Update(ctx, []firestore.Update{{Path: "text", Value: "an edited comment"}, {Path: "edited", Value: firestore.ServerTimestamp}})
		default:
			ch.delta = -1
			wr, err = comments.Doc(id).Delete(ctx)
		}
		if err != nil {
			if ch.delta != 1 {
				run.mu.Lock()
				run.live[i] = append(run.live[i], id) // as it was, most likely
				run.mu.Unlock()
			}
			return answer{}, err
		}
		ch.at = wr.UpdateTime
		if ch.at.IsZero() {
			ch.at = time.Now() // a delete's result carries no time
		}
		run.mu.Lock()
		if ch.delta >= 0 {
			run.live[i] = append(run.live[i], ch.child)
		}
		run.truth[i] += int64(ch.delta)
		run.changes = append(run.changes, ch)
		run.mu.Unlock()
		if e.o.Delivery == report.DeliveryDirect && run.mode != report.AggQuery {
			e.sendChange(run, postID, ch)
		}
		return answer{Status: http.StatusOK, Committed: ch.at}, nil
	}
}

// sendChange sends the event Eventarc would for change ch of a comment of
// postID, through the mode's bridge, as direct delivery does.
func (e *env) sendChange(run *aggRun, postID string, ch change) {
	path := run.coll + "/" + postID + "/" + aggChild + "/" + ch.child
	old := eventarc.IntDoc(path, "n", 1, ch.at.Add(-time.Millisecond))
	now := eventarc.IntDoc(path, "n", 1, ch.at)
	switch ch.delta {
	case 1:
		old = nil
	case -1:
		now = nil
	}
	ev := eventarc.Written(e.o.Project, "(default)", old, now)
	req, err := eventarc.Request(context.Background(), "http://direct", ev)
	if err != nil {
		return
	}
	b := e.bridges[report.AggTrigger]
	if run.mode == report.AggTally {
		b = e.bridges[report.ModeTally]
	}
	b.Send(req.Header, ev.Data())
}

// perEventTrigger is how apps keep a count of documents by hand, and the
// guides show: for each event of a comment, +1 to its post if it was
// created, -1 if it was deleted, with a server-side increment. Every
// redelivered event counts again, and every created or deleted comment is
// one more write of its post.
func (e *env) perEventTrigger(c *firestore.Client) func(context.Context, event.Event) error {
	return func(ctx context.Context, ev event.Event) error {
		data, rel, ok := written(ev)
		if !ok {
			return nil
		}
		delta := 0
		switch {
		case data.GetValue() != nil && data.GetOldValue() == nil:
			delta = 1
		case data.GetValue() == nil && data.GetOldValue() != nil:
			delta = -1
		}
		parts := strings.Split(rel, "/") // {coll}/{post}/comments/{comment}
		if delta == 0 || len(parts) != 4 {
			return nil
		}
		wr, err := c.Collection(parts[0]).Doc(parts[1]).Update(ctx, []firestore.Update{{Path: aggField, Value: firestore.Increment(delta)}})
		if err != nil {
			return err
		}
		e.aggMu.Lock()
		if run := e.agg; run != nil && run.coll == parts[0] {
			if i, ok := run.index[parts[1]]; ok {
				run.mu.Lock()
				run.applied = append(run.applied, applied{post: i, child: parts[3], delta: delta, at: wr.UpdateTime})
				run.mu.Unlock()
			}
		}
		e.aggMu.Unlock()
		return nil
	}
}
