package bench

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/tallycounters/tally/internal/tools/bench/report"
)

// The statistics behind the README's figures, on inputs whose answers are
// known: these need no emulator.

var t0 = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

func msList(ms ...int) []time.Duration {
	out := make([]time.Duration, len(ms))
	for i, m := range ms {
		out[i] = time.Duration(m) * time.Millisecond
	}
	return out
}

func TestPercentile(t *testing.T) {
	for _, c := range []struct {
		name   string
		sorted []time.Duration
		p      float64
		want   time.Duration
	}{
		{"none", nil, .5, 0},
		{"one", msList(7), .99, 7 * time.Millisecond},
		{"p0 is the least", msList(10, 20, 30, 40), 0, 10 * time.Millisecond},
		{"p50 of four is the second (nearest rank)", msList(10, 20, 30, 40), .5, 20 * time.Millisecond},
		{"p99 of four is the last", msList(10, 20, 30, 40), .99, 40 * time.Millisecond},
		{"p100 is the most", msList(10, 20, 30, 40), 1, 40 * time.Millisecond},
		{"p90 of ten is the ninth", msList(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), .9, 9 * time.Millisecond},
		{"p99 of a hundred is the 99th", msList(rangeMs(100)...), .99, 99 * time.Millisecond},
	} {
		if got := percentile(c.sorted, c.p); got != c.want {
			t.Errorf("%s: percentile(%v, %g) = %v, want %v", c.name, c.sorted, c.p, got, c.want)
		}
	}
}

func rangeMs(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i + 1
	}
	return out
}

func TestSpreadOf(t *testing.T) {
	if spreadOf(nil) != nil {
		t.Error("the spread of nothing is not nil")
	}
	got := spreadOf(msList(30, 10, 20, 40)) // unsorted: spreadOf sorts
	want := report.Spread{N: 4, P50: 20, P90: 40, P99: 40, Max: 40}
	if *got != want {
		t.Errorf("spreadOf = %+v, want %+v", *got, want)
	}
}

func TestLags(t *testing.T) {
	for _, c := range []struct {
		name      string
		acks      []time.Time
		writes    []write
		want      []time.Duration
		unreached int
	}{
		{"each increment reaches the first total that holds it",
			[]time.Time{at(0), at(100), at(200)},
			[]write{{at(50), 1}, {at(1000), 3}},
			msList(50, 900, 800), 0},
		{"a total written before the answer came is no lag",
			[]time.Time{at(100)}, []write{{at(90), 1}}, msList(0), 0},
		{"increments no total reached are counted",
			[]time.Time{at(0), at(10), at(20)}, []write{{at(30), 1}},
			msList(30), 2},
		{"no writes", []time.Time{at(0)}, nil, nil, 1},
	} {
		got, unreached := lags(c.acks, c.writes)
		if !slices.Equal(got, c.want) || unreached != c.unreached {
			t.Errorf("%s: lags = %v, %d unreached; want %v, %d", c.name, got, unreached, c.want, c.unreached)
		}
	}
}

func TestPerSecond(t *testing.T) {
	times := []time.Time{at(100), at(900), at(1000), at(2500), at(-1), at(3000)}
	if got, want := perSecond(times, t0, 3), []int{2, 1, 1}; !slices.Equal(got, want) {
		t.Errorf("perSecond = %v, want %v (before the start and after the end left out)", got, want)
	}
}

func TestTotalAtAndCountUpTo(t *testing.T) {
	writes := []write{{at(10), 1}, {at(20), 5}, {at(30), 6}}
	for _, c := range []struct {
		at   time.Time
		want int64
	}{{at(0), 0}, {at(10), 1}, {at(25), 5}, {at(30), 6}, {at(99), 6}} {
		if got := totalAt(writes, c.at); got != c.want {
			t.Errorf("totalAt(%v) = %d, want %d", c.at.Sub(t0), got, c.want)
		}
	}
	sorted := []time.Time{at(10), at(20), at(20), at(30)}
	for _, c := range []struct {
		at   time.Time
		want int
	}{{at(5), 0}, {at(10), 1}, {at(20), 3}, {at(31), 4}} {
		if got := countUpTo(sorted, c.at); got != c.want {
			t.Errorf("countUpTo(%v) = %d, want %d", c.at.Sub(t0), got, c.want)
		}
	}
}

func TestVisibleLatency(t *testing.T) {
	l := &listeners{seen: [][]sighting{
		{{at(500), 1}, {at(1500), 3}}, // counter 0: hot, 3 increments in 1 s
		{{at(2000), 1}},               // counter 1: quiet
		{},                            // counter 2: never seen
		{{at(100), 0}, {at(2100), 2}}, // counter 3: no increments
	}}
	acks := []ack{
		{Counter: 0, At: at(0)}, {Counter: 0, At: at(400)}, {Counter: 0, At: at(700)},
		{Counter: 1, At: at(1000)},
		{Counter: 2, At: at(300)},
	}
	v := visibleLatency(acks, l, 4, 1, 500*time.Millisecond)
	if v.HotCounters != 1 || v.QuietCounters != 2 || v.Unseen != 1 {
		t.Errorf("hot %d, quiet %d, unseen %d; want 1, 2 (the unseen one counts), 1", v.HotCounters, v.QuietCounters, v.Unseen)
	}
	// Hot: 500, 1100, 800 ms; quiet: 1000 ms.
	if got, want := *v.Hot, (report.Spread{N: 3, P50: 800, P90: 1100, P99: 1100, Max: 1100}); got != want {
		t.Errorf("hot spread %+v, want %+v", got, want)
	}
	if got, want := *v.Quiet, (report.Spread{N: 1, P50: 1000, P90: 1000, P99: 1000, Max: 1000}); got != want {
		t.Errorf("quiet spread %+v, want %+v", got, want)
	}
	if v.All.N != 4 {
		t.Errorf("all: %d seen, want 4", v.All.N)
	}
}

func TestPopularity(t *testing.T) {
	const n, draws = 1000, 100_000
	counts := func(popularity string, client int) []int {
		p, err := newPicker(popularity, n, 1)
		if err != nil {
			t.Fatal(err)
		}
		next := p(client, rand.New(rand.NewPCG(1, 2)))
		c := make([]int, n)
		for range draws {
			c[next()]++
		}
		return c
	}
	// Zipf with s = 1.1 over 1,000 counters: counter k takes a share of
	// 1/(k+1)^1.1 over the sum of those (about 5.4): the first about 18%,
	// the first ten about 46%, and the last half under 8%.
	z := counts(PopularityZipf, 0)
	share := func(c []int, from, to int) float64 {
		s := 0
		for _, x := range c[from:to] {
			s += x
		}
		return float64(s) / draws
	}
	for _, c := range []struct {
		name     string
		from, to int
		lo, hi   float64
	}{
		{"first counter", 0, 1, .16, .20},
		{"first ten", 0, 10, .42, .50},
		{"last half", n / 2, n, .03, .08},
	} {
		if s := share(z, c.from, c.to); s < c.lo || s > c.hi {
			t.Errorf("zipf: the %s took %.3f of the increments, want %.2f to %.2f", c.name, s, c.lo, c.hi)
		}
	}
	u := counts(PopularityUniform, 0)
	if lo, hi := slices.Min(u), slices.Max(u); lo < 50 || hi > 160 {
		t.Errorf("uniform: counters took %d to %d increments of %d, want about %d each", lo, hi, draws, draws/n)
	}
	if c := counts(PopularityClient, 1234); c[234] != draws {
		t.Errorf("client: client 1234 of %d counters did not take counter 234 every time", n)
	}
	h := counts(PopularityHot, 0)
	if s := share(h, 0, 1); s < .88 || s > .92 {
		t.Errorf("hot: the first counter took %.3f of the increments, want about %.2f", s, HotShare)
	}
	if hi := slices.Max(h[1:]); hi > 30 {
		t.Errorf("hot: one of the others took %d increments of %d, want about %d each", hi, draws, draws/10/n)
	}
	if _, err := newPicker("pareto", n, 1); err == nil {
		t.Error("an unknown popularity was taken")
	}
	// Three documents of two counts each: every document once, then
	// every document's second count.
	turns, err := newPicker(PopularityTurns, 6, 2)
	if err != nil {
		t.Fatal(err)
	}
	next := turns(0, nil)
	got := make([]int, 7)
	for i := range got {
		got[i] = next()
	}
	if want := []int{0, 2, 4, 1, 3, 5, 0}; !slices.Equal(got, want) {
		t.Errorf("turns gave %v, want %v", got, want)
	}
	rr := inTurns(3, 1)(0, nil)
	if got := []int{rr(), rr(), rr(), rr()}; !slices.Equal(got, []int{0, 1, 2, 0}) {
		t.Errorf("turns of one count a document gave %v", got)
	}
}

// TestHotSpots: per second of the load, the most writes any one shard and
// any one parent took, dated by commit time where the answer gives it;
// the second from which no shard took more than SpreadLimit; the load's
// last, partial, second is left out.
func TestHotSpots(t *testing.T) {
	burst := func(counter, shard, n, fromMs, stepMs int) []ack {
		var out []ack
		for i := range n {
			out = append(out, ack{Counter: counter, Shard: shard, At: at(fromMs + i*stepMs + 5), Committed: at(fromMs + i*stepMs)})
		}
		return out
	}
	spread := func(shards, perShard, fromMs int) []ack {
		var out []ack
		for s := range shards {
			out = append(out, burst(0, s, perShard, fromMs, 1000/perShard)...)
		}
		return out
	}
	for _, c := range []struct {
		name   string
		acks   []ack
		end    int // ms
		series []int
		after  *float64
	}{
		{"one shard throughout", burst(0, 0, 300, 0, 10), 3000, []int{100, 100, 100}, nil},
		{"spread from the second second", append(burst(0, 0, 100, 0, 10), append(spread(20, 5, 1000), spread(20, 5, 2000)...)...), 3000, []int{100, 5, 5}, ptr(1.0)},
		{"spread from the start", spread(10, 8, 0), 1500, []int{8}, ptr(0.0)},
		{"hot again at the end", append(spread(10, 2, 0), burst(0, 3, 11, 1000, 50)...), 2000, []int{2, 11}, nil},
		{"a partial last second is left out", append(burst(0, 0, 5, 0, 100), burst(0, 0, 50, 1000, 10)...), 1600, []int{5}, ptr(0.0)},
		{"two counters' shards 0 are two documents", append(burst(0, 0, 6, 0, 100), burst(1, 0, 6, 0, 100)...), 1000, []int{6}, ptr(0.0)},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := &env{obs: newObserver()}
			r := report.Mode{Mode: report.ModeRaw}
			e.hotSpots(&r, collRaw, []string{"a", "b"}, loadResult{Start: t0, End: at(c.end), Acks: c.acks})
			if !slices.Equal(r.HotShardSeries, c.series) {
				t.Errorf("hottest shard each second %v, want %v", r.HotShardSeries, c.series)
			}
			if (r.SpreadAfter == nil) != (c.after == nil) || r.SpreadAfter != nil && *r.SpreadAfter != *c.after {
				t.Errorf("spread after %v, want %v", report.Maybe("%g", r.SpreadAfter), report.Maybe("%g", c.after))
			}
		})
	}

	// Parents: the most writes to one parent each second, from the
	// observer; a document's counts are written together, counted once.
	e := &env{o: settings{Fields: 2}, obs: newObserver()}
	for _, ms := range []int{0, 400, 1100, 1200, 1300} {
		e.obs.wrote("posts/d.f0", at(ms), 1)
		e.obs.wrote("posts/d.f1", at(ms), 1)
	}
	e.obs.wrote("posts/e.f0", at(100), 1)
	r := report.Mode{Mode: report.ModeTally, HasRollup: true}
	e.hotSpots(&r, collPosts, []string{"d.f0", "d.f1", "e.f0", "e.f1"}, loadResult{Start: t0, End: at(2000)})
	if want := []int{2, 3}; !slices.Equal(r.HotParentSeries, want) {
		t.Errorf("hottest parent each second %v, want %v", r.HotParentSeries, want)
	}
}
