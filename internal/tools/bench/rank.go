package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/counter"
	"github.com/tallycounters/tally/increment"
	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/core/rank"
	"github.com/tallycounters/tally/internal/tools/bench/report"
	"github.com/tallycounters/tally/internal/tools/bridge"
	"github.com/tallycounters/tally/internal/tools/emulator"
	"github.com/tallycounters/tally/internal/tools/opcount"
	"github.com/tallycounters/tally/internal/tools/stack"
	"github.com/tallycounters/tally/rollup"
	"github.com/tallycounters/tally/setup"
)

// RankOptions configures RunRank. Of its Setup, Rate is the likes a
// second over the board (default 200), Duration the load (default 60s),
// Instances the Rollup instances (default 2), and the fault rates are
// the events' duplicates and delays.
type RankOptions struct {
	Setup
	Docs []int // posts on the board, a run each on an emulator of its own; default 10,000 and 100,000
	// Crowded seeds the posts' likes evenly over four cells, crowdedLikes,
	// instead of by Zipf's law: every cell of the board crowded.
	Crowded bool
}

// RunRank measures places on a board of posts by likes: for each size, it
// seeds that many posts with likes by Zipf's law (or crowded), then likes them under
// load through the local stack, with a viral post climbing past the
// rest, posts created and deleted, and events duplicated and delayed,
// while it samples ranks and checks each against the posts read at its
// read time.
func RunRank(ctx context.Context, o RankOptions) (*report.Rank, error) {
	if len(o.Docs) == 0 {
		o.Docs = []int{10000, 100000}
	}
	if o.Rate <= 0 {
		o.Rate = 200
	}
	if o.Duration <= 0 {
		o.Duration = time.Minute
	}
	if o.Instances <= 0 {
		o.Instances = 2
	}
	if o.Project == "" {
		o.Project = "demo-tally-bench"
	}
	rep := &report.Rank{Started: time.Now()}
	for _, n := range o.Docs {
		r, err := rankOn(ctx, o, n)
		if err != nil {
			r.Error = err.Error()
		}
		rep.Runs = append(rep.Runs, r)
		if err != nil {
			return rep, err
		}
	}
	return rep, nil
}

func (o RankOptions) progress(name, detail string, elapsed time.Duration, done bool) {
	if o.Progress != nil {
		o.Progress(Phase{Name: name, Elapsed: elapsed, Detail: detail, Done: done})
	}
}

// rankRun is one run's parts: its stack, clients and what it records.
type rankRun struct {
	o       RankOptions
	n       int
	s       *stack.Stack
	fs      *firestore.Client // the bench's own
	ranker  *counter.Client   // ranks, on a client whose operations are counted
	admin   *counter.Client   // deletes, on the bench's client
	rankOps *opcount.Ops
	board   rank.Board
	most    int64 // the most likes seeded, which the viral post climbs past
	likes   atomic.Int64
	refused atomic.Int64 // likes Increment did not answer 200, or not at all
	refusal atomic.Value // the last of them: its answer or error, a string
	gone    atomic.Int64 // likes of a post deleted, answered 404
	writes  *rankWrites
	failed  int   // samples that failed, not for want of a rank
	lastErr error // the last of their errors
}

// rankOn runs the board of n posts on an emulator of its own.
func rankOn(ctx context.Context, o RankOptions, n int) (report.RankRun, error) {
	r := report.RankRun{Docs: n, Instances: o.Instances, Crowded: o.Crowded}
	bridgePort, err := emulator.FreePort("127.0.0.1")
	if err != nil {
		return r, err
	}
	e, err := emulator.Start(ctx, emulator.Options{Paths: o.Emulator, FunctionsEmulator: fmt.Sprintf("127.0.0.1:%d", bridgePort)})
	if err != nil {
		return r, err
	}
	defer e.Stop()
	o.BridgePort = bridgePort
	run, stop, err := startRankRun(ctx, o, n, e.Host(), &r)
	if err != nil {
		return r, err
	}
	defer stop()
	began := time.Now()
	samples, err := run.load(ctx)
	r.LoadMS = ms(time.Since(began))
	r.Likes, r.Refused = run.likes.Load(), run.refused.Load()
	r.Refusal, _ = run.refusal.Load().(string)
	r.Gone = run.gone.Load()
	st := run.s.Bridge.Stats()
	r.Duplicated, r.Delayed = st.Duplicated, st.Delayed
	if err != nil {
		return r, err
	}
	if err := run.ranker.SettleRanks(ctx); err != nil {
		return r, err
	}
	if last, err := run.sample(ctx, run.viral()); err == nil {
		samples = append(samples, last)
	}
	err = run.check(ctx, samples)
	run.summarize(ctx, samples, &r)
	if err == nil {
		err = run.pages(ctx, &r)
	}
	return r, err
}

// startRankRun seeds the board on the emulator at host, before any
// trigger is registered, so that the seed makes no event, and starts the
// stack on it (which registers them, and takes the emulator's events at
// o.BridgePort), with Rollup instances of the bench's own.
func startRankRun(ctx context.Context, o RankOptions, n int, host string, r *report.RankRun) (*rankRun, func(), error) {
	env := map[string]string{"TALLY_COUNTS": rankColl + ":" + rankField + ",rank(" + rankField + ")"}
	cfg, err := setup.ConfigFromEnv(func(k string) string { return env[k] })
	if err != nil {
		return nil, nil, err
	}
	cfg.Project = o.Project
	fs, err := opcount.Client(ctx, host, o.Project, &opcount.Ops{})
	if err != nil {
		return nil, nil, err
	}
	run := &rankRun{o: o, n: n, fs: fs, rankOps: &opcount.Ops{}, writes: newRankWrites()}
	l := core.MustParse(cfg.Layout) // read by ConfigFromEnv already
	run.board, _ = l.Board(rankColl, rankField)
	seeded := time.Now()
	seed := seedLikes
	if o.Crowded {
		seed = crowdedLikes
	}
	likes := seed(n, rand.New(rand.NewPCG(uint64(n), 7)))
	run.most = slices.Max(likes)
	err = seedBoard(ctx, fs, l, run.board, likes, func(i int) {
		o.progress(fmt.Sprintf("%d posts: seed", n), fmt.Sprintf("%d of %d writes", i, 2*n), time.Since(seeded), false)
	})
	r.SeedMS = ms(time.Since(seeded))
	o.progress(fmt.Sprintf("%d posts: seed", n), fmt.Sprintf("%d writes", 2*n), time.Since(seeded), true)
	if err != nil {
		fs.Close()
		return nil, nil, err
	}
	rollups := run.instances(cfg)
	run.s, err = stack.Start(ctx, stack.Options{Config: cfg, ExternalHost: host, BridgePort: o.BridgePort, Emulator: o.Emulator, ManualJobs: true,
		RollupURL: rollups.URL, Bridge: bridge.Options{Faults: bridge.Faults{DuplicateRate: o.DuplicateRate, DelayRate: o.DelayRate, MaxDelay: o.MaxDelay}}})
	if err != nil {
		rollups.Close()
		fs.Close()
		return nil, nil, err
	}
	rc, err := opcount.Client(ctx, host, o.Project, run.rankOps)
	if err != nil {
		return nil, nil, err
	}
	run.ranker = counter.New(rc, counter.Options{Layout: cfg.Layout, Spacing: cfg.Spacing})
	run.admin = counter.New(fs, counter.Options{Layout: cfg.Layout, Spacing: cfg.Spacing})
	watchCtx, cancelWatch := context.WithCancel(ctx)
	go run.writes.watchSummary(watchCtx, run.board.Summary(fs))
	return run, func() {
		cancelWatch()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		run.s.Stop(sctx)
		rollups.CloseClientConnections()
		rollups.Close()
		rc.Close()
		fs.Close()
	}, nil
}

// instances serves o.Instances Rollup handlers, each event to the next,
// each noting its folds, all on the bench's client.
func (run *rankRun) instances(cfg setup.Config) *httptest.Server {
	hs := make([]http.Handler, run.o.Instances)
	for i := range hs {
		hs[i] = rollup.New(run.fs, rollup.Config{Layout: cfg.Layout, Project: cfg.Project, Spacing: cfg.Spacing, OnFold: run.writes.fold})
	}
	var next atomic.Int64
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hs[next.Add(1)%int64(len(hs))].ServeHTTP(w, r)
	}))
}

// viral is the post that climbs past the rest.
func (run *rankRun) viral() string { return rankColl + "/viral" }

// like adds by to doc through the stack's Increment.
func (run *rankRun) like(ctx context.Context, doc string, by int64) {
	body := fmt.Sprintf(`{"counter":%q,"field":%q,"by":%d}`, doc, rankField, by)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, run.s.FunctionsURL+"/Increment", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		if ctx.Err() == nil {
			run.refused.Add(1)
			run.refusal.Store(err.Error())
		}
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		run.likes.Add(by)
		return
	}
	if resp.StatusCode == http.StatusNotFound {
		run.gone.Add(1) // a post the churn deleted
		return
	}
	run.refused.Add(1)
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
	run.refusal.Store(fmt.Sprintf("%d %s", resp.StatusCode, bytes.TrimSpace(answer)))
}

// load likes the posts at the rate for the duration, by Zipf's law; the
// viral post, made at the start, climbs past the most liked; every few
// seconds a post is deleted and another made. Meanwhile it samples ranks.
func (run *rankRun) load(ctx context.Context) ([]rankSample, error) {
	if _, err := run.fs.Doc(run.viral()).Create(ctx, map[string]any{"title": "viral"}); err != nil {
		return nil, err
	}
	lctx, cancel := context.WithTimeout(ctx, run.o.Duration)
	defer cancel()
	var wg sync.WaitGroup
	const workers = 16
	every := time.Duration(float64(workers) / run.o.Rate * float64(time.Second))
	for w := range workers {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 11))
			z := rand.NewZipf(r, ZipfS, 1, uint64(run.n-1))
			for t := time.NewTicker(every); lctx.Err() == nil; <-t.C {
				run.like(lctx, seedName(int(z.Uint64())), 1)
			}
		})
	}
	wg.Go(func() { run.climb(lctx) })
	wg.Go(func() { run.churn(lctx) })
	samples := run.sampleUntil(lctx)
	wg.Wait()
	return samples, nil
}

// climb takes the viral post past the most liked seeded one within
// the load's first two thirds: every 250 ms a step, in increments of at
// most increment.DefaultMaxStep each.
func (run *rankRun) climb(ctx context.Context) {
	steps := int64(run.o.Duration / (2 * 3 * 250 * time.Millisecond))
	step := max(1, run.most/max(steps, 1)+1)
	for t := time.NewTicker(250 * time.Millisecond); ctx.Err() == nil; <-t.C {
		for left := step; left > 0 && ctx.Err() == nil; left -= increment.DefaultMaxStep {
			run.like(ctx, run.viral(), min(left, increment.DefaultMaxStep))
		}
	}
}

// churn deletes a random seeded post every 3 seconds, through the Go
// client (off the board in the same commit), and makes a new one.
func (run *rankRun) churn(ctx context.Context) {
	r := rand.New(rand.NewPCG(uint64(run.n), 13))
	for i := 0; ctx.Err() == nil; i++ {
		if sleepUntil(ctx, time.Now().Add(3*time.Second)) != nil {
			return
		}
		if err := run.admin.DeleteDocument(ctx, seedName(r.IntN(run.n))); err != nil && ctx.Err() == nil {
			run.o.progress(fmt.Sprintf("%d posts: load", run.n), "delete: "+err.Error(), 0, false)
		}
		fresh := fmt.Sprintf("%s/new%03d", rankColl, i)
		if _, err := run.fs.Doc(fresh).Create(ctx, map[string]any{"title": "new"}); err == nil {
			run.like(ctx, fresh, int64(r.IntN(50)))
		}
	}
}
