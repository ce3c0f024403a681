package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"cloud.google.com/go/firestore"
	"google.golang.org/api/iterator"

	"github.com/tallycounters/tally/counter"
	"github.com/tallycounters/tally/internal/core/rank"
	"github.com/tallycounters/tally/internal/tools/bench/report"
	"github.com/tallycounters/tally/rollup"
)

// rankSample is one rank read, and the truth at its read time.
type rankSample struct {
	doc                      string
	asOf                     time.Time
	value                    float64
	rank, of, truth, truthOf int64
	reads, ops               int
	took, lag                time.Duration
	viral, checked           bool
}

// rankEvery is how often the load's sampler reads a rank.
const rankEvery = 100 * time.Millisecond

// sampleUntil reads ranks, a third of them the viral post's, one every
// rankEvery, until ctx ends. It does not check them: the truth, a count
// of the whole collection, costs the emulator a scan of it, which would
// take it from the load; check does, after.
func (run *rankRun) sampleUntil(ctx context.Context) []rankSample {
	r := rand.New(rand.NewPCG(uint64(run.n), 17))
	var out []rankSample
	began := time.Now()
	for i := 0; ctx.Err() == nil; i++ {
		doc := run.viral()
		if i%3 != 0 {
			doc = seedName(r.IntN(run.n))
		}
		s, err := run.sample(ctx, doc)
		switch {
		case err == nil:
			out = append(out, s)
		case ctx.Err() == nil && !errors.Is(err, counter.ErrNotRanked):
			run.failed++
			run.lastErr = err
		}
		run.o.progress(fmt.Sprintf("%d posts: load", run.n), fmt.Sprintf("%d likes, %d ranks read", run.likes.Load(), len(out)), time.Since(began), false)
		sleepUntil(ctx, time.Now().Add(rankEvery))
	}
	return out
}

// sample reads doc's rank, and what it cost.
func (run *rankRun) sample(ctx context.Context, doc string) (rankSample, error) {
	before := run.rankOps.Reads()
	began := time.Now()
	p, err := run.ranker.Rank(ctx, doc, rankField)
	s := rankSample{doc: doc, asOf: p.AsOf, value: p.Value, took: time.Since(began), ops: int(run.rankOps.Reads() - before),
		rank: p.Rank, of: p.Of, reads: p.Reads, viral: doc == run.viral()}
	if err != nil {
		return s, err
	}
	// the emulator's clock runs ahead of this machine's under load: how
	// old the read time is, by the server's
	if now, err := run.board.Summary(run.fs).Get(ctx); err == nil {
		s.lag = now.ReadTime.Sub(p.AsOf)
	}
	return s, nil
}

// checkBudget bounds the time the checks take: each read time is one
// scan of the collection, on the emulator a second or more at 100,000.
const checkBudget = 5 * time.Minute

// check checks samples against the truth at their read times: 1 + the
// posts with more likes then, of all with likes, from every post's likes
// read at that time, one query for all the samples of one read time (a
// summary's). Read times are taken in turn from the first and the last
// (the viral post's after the load) inward, until the budget ends.
func (run *rankRun) check(ctx context.Context, samples []rankSample) error {
	byTime := map[time.Time][]*rankSample{}
	var times []time.Time
	for i := range samples {
		at := samples[i].asOf
		if _, ok := byTime[at]; !ok {
			times = append(times, at)
		}
		byTime[at] = append(byTime[at], &samples[i])
	}
	began := time.Now()
	for k := range times {
		at := times[k/2]
		if k%2 == 1 {
			at = times[len(times)-1-k/2]
		}
		if time.Since(began) > checkBudget {
			break
		}
		likes, err := likesAt(ctx, run.fs.Collection(rankColl), at)
		if err != nil {
			return fmt.Errorf("bench: the truth at %s: %w", at.Format(time.RFC3339Nano), err)
		}
		for _, s := range byTime[at] {
			s.truth, s.truthOf, s.checked = 1, int64(len(likes)), true
			for _, p := range likes {
				if p.likes > s.value {
					s.truth++
				}
			}
		}
		run.o.progress(fmt.Sprintf("%d posts: check", run.n), fmt.Sprintf("%d of %d read times", k+1, len(times)), time.Since(began), false)
	}
	return nil
}

// likedPost is a post's path and its likes.
type likedPost struct {
	doc   string
	likes float64
}

// likesAt is every post's likes at the read time at, of those that hold
// them.
func likesAt(ctx context.Context, posts *firestore.CollectionRef, at time.Time) ([]likedPost, error) {
	q := posts.Select(rankField)
	it := q.WithReadOptions(firestore.ReadTime(at)).Documents(ctx)
	defer it.Stop()
	var out []likedPost
	for {
		d, err := it.Next()
		if errors.Is(err, iterator.Done) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if v, ok := rank.Value(d.Data()[rankField]); ok {
			out = append(out, likedPost{rankColl + "/" + d.Ref.ID, v})
		}
	}
}

// summarize puts the samples' and the writes' figures into r.
func (run *rankRun) summarize(ctx context.Context, samples []rankSample, r *report.RankRun) {
	var reads []int
	var took, lag []time.Duration
	for _, s := range samples {
		r.RanksRead++
		if s.checked {
			r.Samples++
			if s.rank == s.truth && s.of == s.truthOf {
				r.Exact++
			}
			r.MaxOff = max(r.MaxOff, abs64(s.rank-s.truth))
			r.MaxOfOff = max(r.MaxOfOff, abs64(s.of-s.truthOf))
		}
		reads = append(reads, s.reads)
		r.OpsMax = max(r.OpsMax, s.ops)
		took, lag = append(took, s.took), append(lag, s.lag)
	}
	if len(reads) > 0 {
		slices.Sort(reads)
		r.ReadsP50, r.ReadsMax = reads[len(reads)/2], reads[len(reads)-1]
		slices.Sort(took)
		slices.Sort(lag)
		r.RankP50MS, r.LagP50MS = ms(percentile(took, 0.5)), ms(percentile(lag, 0.5))
	}
	for _, s := range samples {
		if s.viral && r.ViralFrom == 0 {
			r.ViralFrom = s.rank
		}
		if s.viral {
			r.ViralTo = s.rank
		}
	}
	r.Passed = r.ViralFrom - r.ViralTo
	r.SampleErrors = run.failed
	if run.lastErr != nil {
		r.Error = "last failed sample: " + run.lastErr.Error()
	}
	w := run.writes
	w.mu.Lock()
	defer w.mu.Unlock()
	r.Folds, r.Moves, r.MaxExtraFold = w.folds, w.moves, w.maxMoves
	r.ExtraPerFold = float64(w.moves) / math.Max(float64(w.folds), 1)
	r.SummaryMaxPerS = peakInASecond(w.summary)
	for _, ts := range w.posts {
		r.PostMaxPerS = max(r.PostMaxPerS, peakInASecond(ts))
	}
	r.MoveMinGapMS = ms(w.minGap)
	if s, err := rank.ReadSummary(ctx, run.fs, run.board); err == nil {
		r.Cells, r.Crowds = len(s.Cells), len(s.Crowds)
		for _, c := range s.Crowds {
			r.Parts += len(c.Bounds) + 1
		}
	}
}

// rankWrites records what tally wrote: each post's folds, their moves,
// and the summary's writes.
type rankWrites struct {
	mu                     sync.Mutex
	folds, moves, maxMoves int
	posts                  map[string][]time.Time
	summary                []time.Time
	minGap                 time.Duration // the least commit - as_of of the summary's writes: how old a move is at least when its fold deletes it
}

func newRankWrites() *rankWrites {
	return &rankWrites{posts: map[string][]time.Time{}, minGap: time.Duration(math.MaxInt64)}
}

// fold notes one of Rollup's folds.
func (w *rankWrites) fold(f rollup.FoldInfo) {
	if !f.Wrote {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.folds++
	w.moves += f.Moves
	w.maxMoves = max(w.maxMoves, f.Moves)
	w.posts[f.Counter] = append(w.posts[f.Counter], f.Updated)
}

// watchSummary notes each write of the summary until ctx ends.
func (w *rankWrites) watchSummary(ctx context.Context, ref *firestore.DocumentRef) {
	it := ref.Snapshots(ctx)
	defer it.Stop()
	for {
		snap, err := it.Next()
		if err != nil {
			return
		}
		if !snap.Exists() {
			continue
		}
		asOf, _ := snap.Data()["as_of"].(time.Time)
		w.mu.Lock()
		if n := len(w.summary); n == 0 || !w.summary[n-1].Equal(snap.UpdateTime) {
			w.summary = append(w.summary, snap.UpdateTime)
			if n > 0 { // the seed's write took no moves
				w.minGap = min(w.minGap, snap.UpdateTime.Sub(asOf))
			}
		}
		w.mu.Unlock()
	}
}

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}
