package rollup

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"
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
