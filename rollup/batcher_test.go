package rollup

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tallycounters/tally/internal/emulatortest"
	"github.com/tallycounters/tally/layout"
)

type commit struct {
	changes    int
	start, end time.Time
}

// TestBatcherBoundsParentWrites submits a history's changes, each twice and
// all at once: the total is exact, and no commit starts within a window of
// the previous one's end, so the parent takes at most one write per window.
func TestBatcherBoundsParentWrites(t *testing.T) {
	const window = 200 * time.Millisecond
	h := newHistory(t)
	for i := 0; i < 60; i++ {
		h.incr(i%5, 1)
	}
	b := NewBatcher(NewApplier(h.client, h.layout), window, nil)
	var mu sync.Mutex
	var commits []commit
	b.OnCommit = func(_ string, n int, start, end time.Time, err error) {
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			t.Errorf("commit of %d changes: %v", n, err)
		}
		commits = append(commits, commit{n, start, end})
	}
	var wg sync.WaitGroup
	for _, c := range append(slices.Clone(h.changes), h.changes...) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := b.Submit(context.Background(), c); err != nil {
				t.Errorf("Submit: %v", err)
			}
		}()
	}
	wg.Wait()
	h.checkExact()
	if len(commits) >= len(h.changes) {
		t.Errorf("%d commits for %d changes: no grouping", len(commits), len(h.changes))
	}
	for i := 1; i < len(commits); i++ {
		if gap := commits[i].start.Sub(commits[i-1].end); gap < window {
			t.Errorf("commit %d started %v after the previous ended, within the %v window", i, gap, window)
		}
	}
	t.Logf("%d changes (each twice) in %d commits", len(h.changes), len(commits))
}

// TestBatcherCountersIndependent shows that one counter's window does not
// hold back another's commit.
func TestBatcherCountersIndependent(t *testing.T) {
	h1, h2 := newHistory(t), newHistory(t)
	c1, c2 := h1.incr(0, 1), h2.incr(0, 2)
	b := NewBatcher(NewApplier(h1.client, h1.layout), time.Hour, nil)
	if err := b.Submit(context.Background(), c1); err != nil {
		t.Fatal(err)
	}
	// Within c1's hour-long window, c2's counter commits at once.
	if err := b.Submit(context.Background(), c2); err != nil {
		t.Fatal(err)
	}
	h1.checkExact()
	h2.checkExact()
}

// TestBatcherGrowsBusyCounter feeds a 2-shard counter far more events per
// second than 2 shards should take: the rollup raises num_shards, up to its
// maximum, in one of its commits. A quiet counter keeps its shards.
func TestBatcherGrowsBusyCounter(t *testing.T) {
	h, quiet := newHistory(t), newHistory(t)
	for _, x := range []*history{h, quiet} {
		if _, err := x.layout.Counter(x.client, x.id).Set(context.Background(), map[string]any{"num_shards": 2}); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 120; i++ {
		h.incr(i%2, 1)
	}
	quiet.incr(0, 1)
	a := NewApplier(h.client, h.layout)
	a.Grow = GrowPolicy{PerShard: 1, Max: 8, Period: 300 * time.Millisecond}
	b := NewBatcher(a, 20*time.Millisecond, nil)
	// Twelve events every 50 ms: about 240 a second for about half a second.
	var wg sync.WaitGroup
	for i, c := range append(h.changes, quiet.changes...) {
		if i%12 == 0 {
			time.Sleep(50 * time.Millisecond)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := b.Submit(context.Background(), c); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	h.checkExact()
	if n := h.parent()["num_shards"]; n != int64(8) {
		t.Errorf("busy counter: num_shards = %v, want it grown to the maximum, 8", n)
	}
	if n := quiet.parent()["num_shards"]; n != int64(2) {
		t.Errorf("quiet counter: num_shards = %v, want 2", n)
	}
}

// TestBatcherFailedCommitFailsEveryWaiter: when the commit holding many
// changes fails, every one of their handlers gets the error, so that the
// platform retries each event.
func TestBatcherFailedCommitFailsEveryWaiter(t *testing.T) {
	b := NewBatcher(NewApplier(emulatortest.Unreachable(t), layout.Default()), 100*time.Millisecond, nil)
	b.CommitTimeout = time.Second
	var commits int
	b.OnCommit = func(_ string, n int, _, _ time.Time, err error) {
		if err == nil {
			t.Errorf("a commit of %d changes succeeded with Firestore unreachable", n)
		}
		commits++
	}
	now := time.Now()
	var wg sync.WaitGroup
	errs := make([]error, 20)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := Change{Counter: "c", Shard: i, After: Snapshot{true, now, 1}}
			errs[i] = b.Submit(context.Background(), c)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err == nil {
			t.Errorf("handler %d got nil from a failed commit; its event would be lost", i)
		}
	}
	if commits >= len(errs) {
		t.Errorf("%d commits for %d changes: no grouping", commits, len(errs))
	}
}
