package stack

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/setup"
)

// TestEndToEnd runs the whole local stack: 2,000 concurrent HTTP increments
// over 3 counters, two made by Increment on one shard (folded from their
// events) and one of 10 shards (folded by sums), the emulator's own trigger
// delivery, and Rollup. Every total must equal its acknowledged increments
// and its shards.
func TestEndToEnd(t *testing.T) {
	t.Parallel()
	paths := emulatortest.RequirePaths(t)

	ctx := context.Background()
	cfg, err := setup.ConfigFromEnv(func(k string) string { return map[string]string{"TALLY_AUTO_GROW": "false"}[k] }) // keep the shards the test counts
	if err != nil {
		t.Fatal(err)
	}
	cfg.Project = emulatortest.Project
	s, err := Start(ctx, Options{Config: cfg, Emulator: paths})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := s.Stop(ctx); err != nil {
			t.Errorf("Stop: %v", err)
		}
	}()

	client := emulatortest.ClientAt(t, s.EmulatorHost, emulatortest.Project)
	counters := []string{emulatortest.ID(t) + "-a", emulatortest.ID(t) + "-b", emulatortest.ID(t) + "-c"}
	wantShards := map[string]int{counters[0]: 1, counters[1]: 1, counters[2]: 10}
	if _, err := core.Default().Counter(client, counters[2]).Create(ctx, map[string]any{core.FieldNumShards: 10, core.FieldTotal: 0}); err != nil {
		t.Fatal(err)
	}
	const increments, workers = 2000, 64
	var mu sync.Mutex
	acked := map[string]int64{}
	jobs := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				id := counters[i%len(counters)]
				by := int64(i%5 + 1)
				body := fmt.Sprintf(`{"counter":%q,"by":%d}`, id, by)
				resp, err := http.Post(s.FunctionsURL+"/Increment", "application/json", strings.NewReader(body))
				if err != nil {
					t.Errorf("increment: %v", err)
					continue
				}
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					mu.Lock()
					acked[id] += by
					mu.Unlock()
				}
			}
		}()
	}
	for i := 0; i < increments; i++ {
		jobs <- i
	}
	close(jobs)
	wg.Wait()

	for _, id := range counters {
		if acked[id] == 0 {
			t.Fatalf("no increment of %s was acknowledged", id)
		}
		total, sum, shards := waitConverged(t, client, id, acked[id])
		if total != acked[id] || total != sum || shards != wantShards[id] {
			t.Errorf("%s: total %d, acknowledged %d, shards sum %d over %d shards", id, total, acked[id], sum, shards)
		}
	}
	// The totals are exact as soon as a fold sums the shards; the emulator
	// still delivers the rest of the events, each answered by a fold.
	deadline := time.Now().Add(emulatortest.Liveness)
	for s.Bridge.Stats().Received < increments && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := s.Bridge.Wait(wctx); err != nil {
		t.Error(err)
	}
	st := s.Bridge.Stats()
	t.Logf("bridge: %+v", st)
	if st.Received < increments || st.Failures > 0 || st.Dropped > 0 {
		t.Errorf("the emulator delivered %d events for %d writes; %d deliveries failed, %d dropped", st.Received, increments, st.Failures, st.Dropped)
	}
}

// waitConverged reads the counter until its total reaches want, or gives up
// after emulatortest.Liveness (a liveness bound, not a measurement).
func waitConverged(t *testing.T, c *firestore.Client, id string, want int64) (total, sum int64, shards int) {
	t.Helper()
	l := core.Default()
	deadline := time.Now().Add(emulatortest.Liveness)
	for {
		snap, err := l.Counter(c, id).Get(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		total, _ = snap.Data()[core.FieldTotal].(int64)
		if total == want || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	docs, err := l.Shards(c, id, emulatortest.Life(t, l, c, id)).Documents(context.Background()).GetAll()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		n, _ := d.Data()[l.ShardField].(int64)
		sum += n
	}
	return total, sum, len(docs)
}
