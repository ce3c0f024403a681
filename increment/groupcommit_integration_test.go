package increment

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/tallycounters/tally/counter"
	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/testkit/layouttest"
)

// TestGroupCommit: 200 increments of one counter at once, through one
// Increment instance, are written in far fewer shard writes than 200: those
// that come while a write is in flight go together in the next. Every one
// is answered 200 with the commit time of the write that holds it, each
// write's time answered to the increments it holds (so as many times as
// writes), and the shards hold exactly what was added.
func TestGroupCommit(t *testing.T) {
	t.Parallel()
	c, ops := emulatortest.CountingClient(t)
	l := core.Default()
	h := New(c, Config{Layout: layouttest.Public(l), AutoCreate: true})
	id := emulatortest.ID(t)
	if w := serve(h, http.MethodPost, "/", fmt.Sprintf(`{"counter":%q}`, id), nil); w.Code != http.StatusOK {
		t.Fatalf("first increment: %d %s", w.Code, w.Body)
	}
	ops.Reset()
	const n = 200
	var wg sync.WaitGroup
	start := make(chan struct{})
	answers := make([]Response, n)
	codes := make([]int, n)
	want := int64(1) // the first increment's
	for i := range n {
		by := int64(i%3 + 1)
		want += by
		wg.Go(func() {
			<-start
			w := serve(h, http.MethodPost, "/", fmt.Sprintf(`{"counter":%q,"by":%d}`, id, by), nil)
			codes[i] = w.Code
			json.Unmarshal(w.Body.Bytes(), &answers[i])
		})
	}
	close(start)
	wg.Wait()
	times := map[string]int{}
	for i := range n {
		if codes[i] != http.StatusOK || !answers[i].Changed || answers[i].Committed == "" {
			t.Fatalf("increment %d: %d %+v", i, codes[i], answers[i])
		}
		times[answers[i].Committed]++
	}
	writes := ops.Writes()
	if writes > n/2 {
		t.Errorf("%d increments at once took %d shard writes; want them grouped, at most %d", n, writes, n/2)
	}
	if int64(len(times)) != writes {
		t.Errorf("%d commit times answered for %d writes: each write's own time is its increments' answer", len(times), writes)
	}
	sum, err := counter.New(c, counter.Options{}).Sum(context.Background(), id, "")
	if err != nil {
		t.Fatal(err)
	}
	if sum != want {
		t.Errorf("the shards hold %d; %d were added", sum, want)
	}
	t.Logf("%d increments, %d shard writes, %d commit times", n, writes, len(times))
}
