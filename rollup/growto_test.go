package rollup

import (
	"context"
	"testing"
	"time"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/fold"
)

// TestGrowTo checks the shards a fold grows a counter to, from two sums of
// its shards a period apart or more, under DefaultGrow: a shard should
// take a write a second, so a counter grows to its rate in writes a
// second (whatever amounts they add), at least doubling, and at most to
// Max.
func TestGrowTo(t *testing.T) {
	docs, err := core.ParseCounts("posts:likes,views")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		policy    GrowPolicy
		docs      bool
		numShards int
		after     time.Duration // between the two sums
		moved     []int64       // each count's change between them
		writes    int           // the shard writes between them
		want      int
	}{
		{"quiet", DefaultGrow, false, 1, time.Second, []int64{1}, 1, 0},
		{"busy", DefaultGrow, false, 1, time.Second, []int64{100}, 100, 100},
		{"decrements are writes", DefaultGrow, false, 1, time.Second, []int64{-100}, 100, 100},
		{"amounts are not writes", DefaultGrow, false, 1, time.Second, []int64{30000}, 30, 30},
		{"one large amount is one write", DefaultGrow, false, 1, time.Second, []int64{1000}, 1, 0},
		{"at least doubles", DefaultGrow, false, 2, time.Second, []int64{3}, 3, 4},
		{"at most Max", DefaultGrow, false, 1, time.Second, []int64{5000}, 5000, 1000},
		{"at Max already", DefaultGrow, false, 1000, time.Second, []int64{5000}, 5000, 0},
		{"within a period", DefaultGrow, false, 1, 100 * time.Millisecond, []int64{100}, 100, 0},
		{"off", GrowPolicy{}, false, 1, time.Second, []int64{100}, 100, 0},
		{"every count of a document", DefaultGrow, true, 0, time.Second, []int64{30, -30}, 60, 60},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newFakeStore(t)
			if tc.docs {
				s.layout = core.Layout{Docs: docs}
			}
			tr := newTracker(s, s.clock.now, tc.policy, 0, nil)
			ctx := context.Background()
			c := tr.counter("c")
			p := core.Parent{Exists: true, NumShards: tc.numShards}
			first := fold.Sum{At: start, Values: make([]int64, len(tc.moved))}
			if got := tr.growTo(ctx, c, p, first); got != 0 {
				t.Fatalf("first sum: growTo = %d, want 0: no rate yet", got)
			}
			for i := range tc.writes {
				s.wrote = append(s.wrote, start.Add(tc.after*time.Duration(i+1)/time.Duration(tc.writes)))
			}
			second := fold.Sum{At: start.Add(tc.after), Values: tc.moved}
			if got := tr.growTo(ctx, c, p, second); got != tc.want {
				t.Errorf("growTo = %d, want %d", got, tc.want)
			}
		})
	}
}

// The rate is measured from the last sum it was measured from: a sum
// within the period keeps the base, one past it moves it on.
func TestGrowToMeasuresFromTheLastBase(t *testing.T) {
	s := newFakeStore(t)
	tr := newTracker(s, s.clock.now, DefaultGrow, 0, nil)
	c := tr.counter("c")
	p := core.Parent{Exists: true, NumShards: 1}
	ctx := context.Background()
	sum := func(after time.Duration, v int64) fold.Sum {
		return fold.Sum{At: start.Add(after), Values: []int64{v}}
	}
	for i := range 11 {
		s.wrote = append(s.wrote, start.Add(time.Second+time.Duration(i)*time.Millisecond))
	}
	tr.growTo(ctx, c, p, sum(0, 0))
	tr.growTo(ctx, c, p, sum(100*time.Millisecond, 50)) // within the period
	if !c.base.At.Equal(start) {
		t.Fatalf("base moved to %v within the period", c.base.At)
	}
	tr.growTo(ctx, c, p, sum(time.Second, 1)) // a rate of 1 a second: no growth
	if got := tr.growTo(ctx, c, p, sum(2*time.Second, 11)); got != 10 {
		t.Errorf("growTo = %d, want 10: ten writes in the second since the last base", got)
	}
}
