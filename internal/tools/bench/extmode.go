package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"golang.org/x/sync/errgroup"
	"golang.org/x/time/rate"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/extension"
	"github.com/tallycounters/tally/internal/fsrpc"
	"github.com/tallycounters/tally/internal/tools/bench/report"
	"github.com/tallycounters/tally/internal/tools/extworker"
	"github.com/tallycounters/tally/internal/tools/syncwatch"
)

// extClient is one client of a mode: the document it counts on, its
// shard (an extension's client's), its increments' commit times, and
// what its listener saw.
type extClient struct {
	doc, shard string
	mu         sync.Mutex
	commits    []time.Time
	seen       []sight
	changes    atomic.Int64 // document changes its listener got: a read each
}

// sight is one consistent snapshot a client's listener raised: the
// document's likes and as_of, and what the client's shard and partials
// hold of likes, as the extension's client reads them (a field of their
// own; a partial's sit in its list of updates, which the client does not
// read).
type sight struct {
	at          time.Time
	likes, mine int64
	asOf        time.Time
}

// runMode runs mode m on fresh documents: the load, then the wait for the
// documents to hold every increment, and reports.
func (e *extEnv) runMode(ctx context.Context, m string) (report.ExtensionMode, error) {
	coll := collExtension
	if m == report.ModeTally {
		coll = collCounted
	}
	run := uuid.NewString()[:8]
	docs := make([]string, e.o.Documents)
	for i := range docs {
		docs[i] = fmt.Sprintf("%s/%s-%s-%d", coll, m, run, i)
		if _, err := e.admin.Doc(docs[i]).Create(ctx, map[string]any{"title": "a post", "likes": int64(0)}); err != nil {
			return report.ExtensionMode{}, err
		}
	}
	clients := make([]*extClient, e.o.Workers)
	for i := range clients {
		clients[i] = &extClient{doc: docs[i%len(docs)], shard: uuid.NewString()}
	}
	lctx, stopListening := context.WithCancel(ctx)
	defer stopListening()
	follow, err := e.listen(lctx, clients, m)
	if err != nil {
		return report.ExtensionMode{}, err
	}
	e.reset()
	r := report.ExtensionMode{Mode: m}
	wctx, stopWorker := context.WithCancel(ctx)
	var working sync.WaitGroup
	if m == report.ModeExtensionWorker {
		working.Go(func() { e.work(wctx, docs) })
	}
	began := time.Now()
	latencies, last := e.drive(ctx, m, clients, &r)
	r.IncrPerSec = float64(r.Acked) / time.Since(began).Seconds()
	stopWorker()
	working.Wait()
	slices.Sort(latencies)
	r.LatencyP50, r.LatencyP99 = ms(percentile(latencies, .5)), ms(percentile(latencies, .99))
	e.settle(ctx, clients, docs, last, &r)
	stopListening()
	if err := follow(); err != nil {
		return r, fmt.Errorf("a client's listener: %w", err)
	}
	if r.Acked == 0 {
		return r, fmt.Errorf("no increment was acknowledged (%d failed)", r.Errors)
	}
	e.figures(&r, m, docs, clients, time.Since(began))
	return r, nil
}

// reset zeroes what a mode measures.
func (e *extEnv) reset() {
	e.ops.load.Reset()
	e.ops.rollup.Reset()
	e.ops.worker.Reset()
	for _, m := range append(slices.Clone(e.rollups), e.incr) {
		m.reset()
	}
	e.mu.Lock()
	e.writes, e.byWorker = map[string][]time.Time{}, map[string]int{}
	e.mu.Unlock()
}

// drive runs the load: every client increments its document as fast as
// the shared rate allows, for the duration. It returns the answers'
// latencies and when the last came.
func (e *extEnv) drive(ctx context.Context, m string, clients []*extClient, r *report.ExtensionMode) ([]time.Duration, time.Time) {
	limit := rate.NewLimiter(rate.Limit(e.o.Rate), 1)
	if e.o.Rate <= 0 {
		limit = rate.NewLimiter(rate.Inf, 1)
	}
	dctx, cancel := context.WithTimeout(ctx, e.o.Duration)
	defer cancel()
	var mu sync.Mutex
	var latencies []time.Duration
	var last time.Time
	var wg sync.WaitGroup
	for _, c := range clients {
		wg.Go(func() {
			for limit.Wait(dctx) == nil {
				t0 := time.Now()
				at, err := e.increment(ctx, m, c)
				mu.Lock()
				if err != nil {
					r.Errors++
				} else {
					r.Acked++
					latencies = append(latencies, time.Since(t0))
					last = time.Now()
				}
				mu.Unlock()
				if err == nil {
					c.mu.Lock()
					c.commits = append(c.commits, at)
					c.mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	return latencies, last
}

// increment is one increment of client c in mode m, and its commit time:
// through Increment for tally's clients, on its shard for the
// extension's.
func (e *extEnv) increment(ctx context.Context, m string, c *extClient) (time.Time, error) {
	if m != report.ModeTally {
		return extworker.Increment(ctx, e.load.Doc(c.doc).Collection(extension.Collection).Doc(c.shard), "likes", 1)
	}
	body, _ := json.Marshal(map[string]string{"counter": c.doc, "field": "likes"})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.incrURL, bytes.NewReader(body))
	if err != nil {
		return time.Time{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return time.Time{}, err
	}
	defer resp.Body.Close()
	var answer struct{ Committed time.Time }
	if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil || resp.StatusCode != http.StatusOK {
		return time.Time{}, fmt.Errorf("increment: %d %v", resp.StatusCode, err)
	}
	return answer.Committed, nil
}

// listen opens every client's listener, as the extension's clients
// listen: on its document, and, for the extension's clients, on its shard
// and the four partials whose ids are prefixes of its shard's. It returns
// once each has its first snapshot (only writes after that are safe from
// the emulator's listen race: see syncwatch), and follow, which holds the
// listeners until ctx ends and says the first that failed.
func (e *extEnv) listen(ctx context.Context, clients []*extClient, m string) (follow func() error, err error) {
	database := "projects/" + e.o.Project + "/databases/(default)"
	streams := make([]*syncwatch.Stream, len(clients))
	var g errgroup.Group
	for i, c := range clients {
		g.Go(func() error {
			names := c.listened(database, m)
			s, first, err := syncwatch.Open(ctx, e.host, database, names)
			if err != nil {
				return err
			}
			c.see(first, names)
			streams[i] = s
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, fmt.Errorf("a client's listener: %w", err)
	}
	var following errgroup.Group
	for i, c := range clients {
		names := c.listened(database, m)
		following.Go(func() error { return streams[i].Follow(func(s syncwatch.Snapshot) { c.see(s, names) }) })
	}
	return following.Wait, nil
}

// listened is what c's listener follows, by full name: its document
// first.
func (c *extClient) listened(database, m string) []string {
	root := database + "/documents/"
	names := []string{root + c.doc}
	if m != report.ModeTally {
		shards := root + c.doc + "/" + extension.Collection + "/"
		names = append(names, shards+c.shard)
		for n := 1; n <= 4; n++ {
			names = append(names, shards+tabs(n)+c.shard[:5-n])
		}
	}
	return names
}

// see records one snapshot of c's listener of names.
func (c *extClient) see(s syncwatch.Snapshot, names []string) {
	c.changes.Add(int64(s.Changes))
	doc := s.Docs[names[0]]
	seen := sight{at: s.ReadTime, likes: syncwatch.Int(doc, "likes"), asOf: syncwatch.Time(doc, core.FieldBookkeeping, core.FieldAsOf)}
	for _, n := range names[1:] {
		seen.mine += syncwatch.Int(s.Docs[n], "likes")
	}
	c.mu.Lock()
	c.seen = append(c.seen, seen)
	c.mu.Unlock()
}

func tabs(n int) string { return "\t\t\t\t"[:n] }

// work runs the stand-in for the extension's workers on docs until ctx
// ends, a round a second, as theirs run, recording its writes of the
// documents.
func (e *extEnv) work(ctx context.Context, docs []string) {
	w := extworker.Worker{Client: e.worker}
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		for _, d := range docs {
			w.ToPartials(ctx, d)
			cctx, committed := fsrpc.WithCommitTime(ctx)
			if n, err := w.ToDocument(cctx, d); err == nil && n > 0 {
				e.wrote(d, committed(), true)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// settle waits, up to the settle bound, for each document to hold its
// clients' increments, and says how long that took after the last answer
// and what was left in shards.
func (e *extEnv) settle(ctx context.Context, clients []*extClient, docs []string, last time.Time, r *report.ExtensionMode) {
	want := map[string]int64{}
	for _, c := range clients {
		want[c.doc] += int64(len(c.commits))
	}
	deadline := time.Now().Add(e.o.Settle)
	for {
		var total int64
		exact := true
		for _, d := range docs {
			snap, err := e.admin.Doc(d).Get(ctx)
			if err != nil {
				exact = false
				continue
			}
			n, _ := snap.Data()["likes"].(int64)
			total += n
			exact = exact && n == want[d]
		}
		r.Total, r.Drift = total, total-r.Acked
		if exact {
			r.SettleMS = ptr(ms(time.Since(last)))
			break
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, d := range docs {
		snaps, _ := e.admin.Doc(d).Collection(extension.Collection).Documents(ctx).GetAll()
		for _, s := range snaps {
			a, _ := extension.AmountsOf(s.Ref.ID, s.Data())
			if a == nil {
				continue
			}
			n, _ := a.Of([]string{"likes"}).(int64)
			r.Left += n
		}
	}
}
