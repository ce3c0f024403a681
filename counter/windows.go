package counter

import (
	"cmp"
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/core/bytime"
	"github.com/tallycounters/tally/internal/core/calendar"
	"github.com/tallycounters/tally/internal/fold"
)

// MoveReport is what a run of the boundary job did.
type MoveReport struct {
	Due    int   `json:"due"`    // documents whose next_boundary had passed
	Moved  int   `json:"moved"`  // of them, folded at the boundary (the others were folded since it)
	Errors int   `json:"errors"` // of them, not moved: see the log
	TookMS int64 `json:"took_ms"`
}

// moveWorkers is how many documents the boundary job moves at once.
const moveWorkers = 32

// MoveWindows is the boundary job: it moves the windows of every counted
// document whose next_boundary is at or before now to the start of its
// current bucket, moveWorkers at a time,
// and calls report for each it could not move.
func (c *Client) MoveWindows(ctx context.Context, now time.Time, report func(id string, err error)) (MoveReport, error) {
	began := time.Now()
	due, err := c.folder.Due(ctx, now)
	if err != nil {
		return MoveReport{}, fmt.Errorf("counter: %w", err)
	}
	rep := MoveReport{Due: len(due)}
	byName := make(map[string]fold.Due, len(due))
	names := make([]string, len(due))
	for i, d := range due {
		byName[d.Name], names[i] = d, d.Name
	}
	var mu sync.Mutex
	each(ctx, names, func(name string) {
		var out fold.Outcome
		err := guarded(name, func() (err error) {
			fctx, cancel := c.boundFold(ctx)
			defer cancel()
			out, err = c.folder.FoldAtBoundary(fctx, byName[name], now)
			return err
		})
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err != nil:
			rep.Errors++
			if report != nil {
				report(name, err)
			}
		case out.Wrote:
			rep.Moved++
		}
	})
	rep.TookMS = time.Since(began).Milliseconds()
	return rep, ctx.Err()
}

// Unit is the shortest unit of the windows declared, whose every start of
// a bucket the boundary job runs at: "" if none is declared.
func (c *Client) Unit() Unit { return Unit(c.layout.SmallestUnit()) }

// Bucket is one bucket of a window's series.
type Bucket struct {
	Start time.Time `json:"start"`
	Count int64     `json:"count"`
}

// Series is the series of the per or over window field of id: its closed
// buckets kept, oldest first, each with its count (0 where it counted
// nothing), then the current one with the window's count in it so far.
// One document read.
func (c *Client) Series(ctx context.Context, id, field string) ([]Bucket, error) {
	if c.layout.Kept(id, field) != core.KeptWindow {
		return nil, fmt.Errorf("counter: %s of %s is not a declared window (name=count per unit, or over N units)", field, id)
	}
	snap, err := c.readDoc(ctx, id, field)
	if err != nil {
		return nil, err
	}
	var w bytime.Window
	for _, x := range c.layout.WindowsOf(id) {
		if x.Field == field {
			w = x
		}
	}
	st := core.StateOf(c.layout, snap.Data(), field)
	if st.Bucket.IsZero() {
		return nil, nil // not folded since it was declared
	}
	keep := w.N
	if w.Kind == bytime.KindOver {
		keep = w.N - 1
	}
	zone := c.layout.Zone
	out := make([]Bucket, keep+1)
	b := st.Bucket
	for i := keep; i >= 0; i-- {
		out[i] = Bucket{Start: b.In(zone), Count: st.Series[calendar.BucketKey(b)]}
		b = w.Unit.Prev(b, zone)
	}
	cur, _ := snap.Data()[w.Count].(int64)
	if w.Kind == bytime.KindPer {
		out[keep].Count, _ = snap.Data()[field].(int64)
	} else {
		out[keep].Count = cur - st.Base
	}
	return out, nil
}

// trend is the score now of the trend field of id: the decayed sum of its
// counts, each unit weighing 2^(-age/half-life). One document read.
func (c *Client) trend(ctx context.Context, id, field string) (float64, error) {
	if c.layout.Kept(id, field) != core.KeptTrend {
		return 0, fmt.Errorf("counter: %s of %s is not a declared trend (name=trend(counts, half-life))", field, id)
	}
	snap, err := c.readDoc(ctx, id, field)
	if err != nil {
		return 0, err
	}
	for _, w := range c.layout.WindowsOf(id) {
		if w.Field == field {
			return trendNow(snap.Data(), w, time.Now()), nil
		}
	}
	return 0, nil
}

// trendNow is the score at now of the trend w as data holds it: 0 if it
// has not been folded since it was declared.
func trendNow(data map[string]any, w bytime.Window, now time.Time) float64 {
	S, ok := data[w.Field].(float64)
	if !ok {
		return 0
	}
	return bytime.TrendNow(S, now, w.HalfLife)
}

// Value is any field tally keeps of id, as it reads now: a count's or a
// window's int64; an aggregate's int64, float64 or nil; a trend's score
// now, a float64. One document read.
func (c *Client) Value(ctx context.Context, id, field string) (any, error) {
	if c.layout.Kept(id, field) == core.KeptTrend {
		return c.trend(ctx, id, field)
	}
	return c.read(ctx, id, field)
}

// Fields are the fields tally keeps on the document id: its counts, its
// aggregates, then its windows and trends, as declared.
func (c *Client) Fields(id string) []string { return c.layout.KeptFields(id) }

// OnDocuments reports whether the Client's counts are on the app's
// documents (its Layout's TALLY_COUNTS declares some), whose counters
// are named by their paths.
func (c *Client) OnDocuments() bool { return c.layout.OnDocs() }

// Values reads the document id once and answers every field tally keeps
// there (Fields), each as Value reads it.
func (c *Client) Values(ctx context.Context, id string) (map[string]any, error) {
	fields := c.Fields(id)
	if len(fields) == 0 {
		return nil, fmt.Errorf("counter: %s holds no field tally keeps", id)
	}
	snap, err := c.readDoc(ctx, id, fields[0])
	if err != nil || snap == nil {
		return nil, cmp.Or(err, fmt.Errorf("counter: %s of %s: %w", fields[0], id, ErrNotFound))
	}
	out := make(map[string]any, len(fields))
	for _, f := range fields {
		v, ok := snap.Data()[f]
		if !ok {
			v = c.layout.BeforeFold(id, f)
		}
		out[f] = v
	}
	now := time.Now()
	for _, w := range c.layout.WindowsOf(id) {
		if w.Kind == bytime.KindTrend {
			out[w.Field] = trendNow(snap.Data(), w, now)
		}
	}
	return out, nil
}
