package bench

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"cloud.google.com/go/firestore"
	"golang.org/x/sync/errgroup"

	"github.com/tallycounters/tally/internal/tools/bench/report"
)

// prime makes each counter of mode m quiet before a burst: made (by its
// first increment, for new counters), incremented and taken back, so
// that its total is 0 again, with every event of it answered and a window
// passed since, as a counter liked now and then is when it goes viral.
// Increment then holds each counter in its cache, as an instance that
// served it lately does.
func (e *env) prime(ctx context.Context, m string, ids []string, inc incrementFunc) error {
	var before int64
	b := e.bridges[m]
	if b != nil {
		before = b.Stats().Received
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(1, e.o.Workers))
	for _, id := range ids {
		g.Go(func() error {
			for _, by := range []int64{1, -1} {
				if err := stepUntilWritten(gctx, inc, id, by); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return fmt.Errorf("bench: making the counters quiet before the burst: %w", err)
	}
	if b != nil {
		// Two events a counter, each answered once a fold covers it.
		want := before + 2*int64(len(ids))
		deadline := time.Now().Add(settleBound(e.o))
		for (b.Stats().Received < want || !b.Idle()) && time.Now().Before(deadline) && ctx.Err() == nil {
			time.Sleep(20 * time.Millisecond)
		}
	}
	time.Sleep(max(e.o.Window, 100*time.Millisecond)) // the parents' last writes a window old: quiet
	return ctx.Err()
}

// stepUntilWritten adds by to counter id, trying again on a refusal, until
// it is answered 200.
func stepUntilWritten(ctx context.Context, inc incrementFunc, id string, by int64) error {
	for attempt := 0; ; attempt++ {
		a, err := inc(ctx, id, by)
		switch {
		case err == nil && a.Status == http.StatusOK:
			return nil
		case err == nil && refused(a.Status) && attempt < 20:
			time.Sleep(max(a.RetryAfter, 100*time.Millisecond))
			continue
		case err == nil:
			return fmt.Errorf("%s: answered %d", id, a.Status)
		}
		return fmt.Errorf("%s: %w", id, err)
	}
}

// hotSpots records, for each second of the load, the most writes any one
// shard took (or, for a single-document counter, its one document), and
// the most any one parent took, and from which second on no shard took
// more than SpreadLimit. Shard writes are dated by their commit times
// where the answers give them, parent writes by theirs.
func (e *env) hotSpots(r *report.Mode, coll string, ids []string, res loadResult) {
	seconds := int(res.End.Sub(res.Start) / time.Second) // whole seconds only
	if seconds <= 0 {
		return
	}
	type doc struct{ counter, shard int }
	shards := make([]map[doc]int, seconds)
	for i := range shards {
		shards[i] = map[doc]int{}
	}
	r.HotShardSeries = make([]int, seconds)
	for _, a := range res.Acks {
		at := a.Committed
		if at.IsZero() {
			at = a.At
		}
		s := int(at.Sub(res.Start) / time.Second)
		if at.Before(res.Start) || s >= seconds {
			continue
		}
		d := doc{e.docOf(r.Mode, a.Counter), a.Shard}
		shards[s][d]++
		r.HotShardSeries[s] = max(r.HotShardSeries[s], shards[s][d])
	}
	if r.HasRollup {
		r.HotParentSeries = make([]int, seconds)
		fields := max(e.fieldsOf(r.Mode), 1)
		for i, id := range ids {
			if i%fields != 0 {
				continue // a document's counts are written together: once, with its first
			}
			for s, n := range perSecond(writeTimes(e.obs.of(observed(coll, id), res.Start)), res.Start, seconds) {
				r.HotParentSeries[s] = max(r.HotParentSeries[s], n)
			}
		}
	}
	for s := seconds; s > 0 && r.HotShardSeries[s-1] <= report.SpreadLimit; s-- {
		r.SpreadAfter = ptr(float64(s - 1))
	}
	for _, n := range r.HotShardSeries {
		r.HotShardPeak = max(r.HotShardPeak, n)
	}
}

// writeTimes lists when each write committed.
func writeTimes(ws []write) []time.Time {
	out := make([]time.Time, len(ws))
	for i, w := range ws {
		out[i] = w.At
	}
	return out
}

// shardsAtEnd is the most shards any of the counters of mode m has after
// the load: num_shards as its parent says (the default, 1, where it says
// none), or what the mode writes to.
func (e *env) shardsAtEnd(ctx context.Context, m, coll string, ids []string) *int {
	switch m {
	case report.ModePlain:
		return nil
	case report.ModeRaw:
		return ptr(e.rawShards())
	}
	lay := tallyLayout(e.o)
	if m != report.ModeTally {
		lay.Docs = nil
	}
	most := 1
	const batch = 300
	for lo := 0; lo < len(ids); lo += batch {
		refs := make([]*firestore.DocumentRef, 0, batch)
		for _, id := range ids[lo:min(lo+batch, len(ids))] {
			path, _ := target(coll, id)
			refs = append(refs, e.reader.Doc(path))
		}
		snaps, err := e.reader.GetAll(ctx, refs)
		if err != nil {
			return nil
		}
		for _, snap := range snaps {
			if snap.Exists() {
				n, _ := lay.NumShards(snap.Data())
				most = max(most, n)
			}
		}
	}
	return &most
}
