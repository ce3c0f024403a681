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
	"cloud.google.com/go/firestore/apiv1/firestorepb"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/tools/eventarc"
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
	// still delivers the rest of the events, each answered by a fold. An
	// event is a shard write's, which may hold many increments (group
	// commit): each write counts itself on its shard.
	writes := shardWrites(t, client, counters)
	deadline := time.Now().Add(emulatortest.Liveness)
	for s.Bridge.Stats().Received < writes && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := s.Bridge.Wait(wctx); err != nil {
		t.Error(err)
	}
	st := s.Bridge.Stats()
	t.Logf("bridge: %+v", st)
	if st.Received < writes || st.Failures > 0 || st.Dropped > 0 {
		t.Errorf("the emulator delivered %d events for %d writes; %d deliveries failed, %d dropped", st.Received, writes, st.Failures, st.Dropped)
	}
	forged(t, s, client, counters[0], acked[counters[0]])
}

// forged sends an event that no write made, claiming shard 0 of the
// one-shard counter id holds 999,999, to the stack's /Rollup and to its
// bridge at a path no trigger of its emulator posts to: each is refused,
// and id's total stays want, as deployed, where only the trigger's account
// may call Rollup.
func forged(t *testing.T, s *Stack, c *firestore.Client, id string, want int64) {
	t.Helper()
	ctx := context.Background()
	shard := core.Default().Shard(c, id, "", 0)
	e := eventarc.Written(emulatortest.Project, "(default)", nil, eventarc.IntDoc(strings.SplitN(shard.Path, "/documents/", 2)[1], "count", 999999, time.Now()))
	for url, code := range map[string]int{
		s.FunctionsURL + "/Rollup": http.StatusForbidden,
		"http://" + s.BridgeAddr + "/functions/projects/" + emulatortest.Project + "/triggers/" + TriggerKey: http.StatusNotFound,
	} {
		req, err := eventarc.Request(ctx, url, e)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != code {
			t.Errorf("a forged event to %s answered %d, want %d", url, resp.StatusCode, code)
		}
	}
	if err := s.Bridge.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if total, _, _ := waitConverged(t, c, id, want); total != want {
		t.Errorf("%s: total %d after forged events, want %d", id, total, want)
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

// shardWrites is how many writes the shards of the guide layout's counters
// ids took: each write counts itself on its shard (core.FieldWrites).
func shardWrites(t *testing.T, client *firestore.Client, ids []string) int64 {
	t.Helper()
	l := core.Default()
	var n int64
	for _, id := range ids {
		res, err := l.Shards(client, id, "").NewAggregationQuery().WithSumPath(l.WritesPath(), "w").Get(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		v, _ := res["w"].(*firestorepb.Value)
		n += v.GetIntegerValue()
	}
	return n
}
