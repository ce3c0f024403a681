package tally

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/firestore"
	"github.com/cloudevents/sdk-go/v2/event"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/tools/eventarc"
)

func post(t *testing.T, req *http.Request) *http.Response {
	t.Helper()
	for i := 0; ; i++ { // the framework may still be starting
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			return resp
		}
		if i == 50 {
			t.Errorf("%s %s: %v", req.Method, req.URL, err)
			runtime.Goexit()
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestFunctions sends increments through the registered Increment function,
// then, for each write, the event Eventarc would send (binary mode,
// application/protobuf), shuffled and redelivered, to the registered Rollup.
func TestFunctions(t *testing.T) {
	ctx := context.Background()
	client := emulatortest.Client(t)
	id := emulatortest.ID(t)
	l := core.Default()

	type shardState struct {
		count int64
		doc   *eventarc.Doc
	}
	last := map[int]*shardState{}
	var events []event.Event
	var want int64
	for i := 0; i < 30; i++ {
		by := int64(rand.IntN(9) - 3)
		if by == 0 {
			by = 1
		}
		body := fmt.Sprintf(`{"counter":%q,"by":%d}`, id, by)
		req, _ := http.NewRequest(http.MethodPost, base+"/Increment", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp := post(t, req)
		var got struct {
			Shard int
			By    int64
		}
		json.NewDecoder(resp.Body).Decode(&got)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || got.By != by {
			t.Fatalf("Increment: %d %+v", resp.StatusCode, got)
		}
		want += by
		// Read back the shard to learn the version this write produced.
		snap, err := l.Shard(client, id, "", got.Shard).Get(ctx)
		if err != nil {
			t.Fatal(err)
		}
		path := fmt.Sprintf("counters/%s/shards/%d", id, got.Shard)
		st := last[got.Shard]
		if st == nil {
			st = &shardState{}
			last[got.Shard] = st
		}
		st.count += by
		after := eventarc.IntDoc(path, l.ShardField, st.count, snap.UpdateTime)
		events = append(events, eventarc.Written(emulatortest.Project, "(default)", st.doc, after))
		st.doc = after
	}
	events = append(events, events...)
	rand.Shuffle(len(events), func(i, j int) { events[i], events[j] = events[j], events[i] })
	// Eventarc pushes events concurrently; the rollup commits them in groups.
	var wg sync.WaitGroup
	for _, e := range events {
		req, err := eventarc.Request(ctx, base+"/Rollup", e)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp := post(t, req)
			resp.Body.Close()
			if resp.StatusCode/100 != 2 {
				t.Errorf("Rollup answered %d", resp.StatusCode)
			}
		}()
	}
	wg.Wait()
	if got := total(t, client, id); got != want {
		t.Errorf("total = %d, want %d", got, want)
	}

	// A malformed event is acknowledged and writes nothing.
	other := emulatortest.ID(t)
	bad := eventarc.Written(emulatortest.Project, "(default)", nil,
		&eventarc.Doc{Path: "counters/" + other + "/shards/01", Updated: time.Now()})
	req, _ := eventarc.Request(ctx, base+"/Rollup", bad)
	if resp := post(t, req); resp.StatusCode/100 != 2 {
		t.Errorf("malformed event answered %d; it would be retried forever", resp.StatusCode)
	}
	if snap, _ := l.Counter(client, other).Get(ctx); snap.Exists() {
		t.Error("malformed event wrote a counter")
	}
}

// TestRollupHTTP checks what /Rollup answers to what cannot be an
// Eventarc delivery: a GET, a body over 512 KiB, a POST that is not a
// CloudEvent. None writes anything.
func TestRollupHTTP(t *testing.T) {
	ctx := context.Background()
	client := emulatortest.Client(t)
	id := emulatortest.ID(t)
	big := eventarc.Written(emulatortest.Project, "(default)", nil, eventarc.IntDoc("counters/"+id+"/shards/1", "count", 1, time.Now()))
	big.SetData("application/protobuf", make([]byte, 513<<10))
	bigReq, _ := eventarc.Request(ctx, base+"/Rollup", big)
	plain, _ := http.NewRequest(http.MethodPost, base+"/Rollup", strings.NewReader(`{"counter":"`+id+`"}`))
	plain.Header.Set("Content-Type", "application/json")
	get, _ := http.NewRequest(http.MethodGet, base+"/Rollup", nil)
	for _, tc := range []struct {
		name string
		req  *http.Request
		want int
	}{
		{"GET", get, http.StatusMethodNotAllowed},
		{"over 512 KiB", bigReq, http.StatusRequestEntityTooLarge},
		{"not a CloudEvent: logged and acknowledged", plain, http.StatusNoContent},
	} {
		resp := post(t, tc.req)
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, resp.StatusCode, tc.want)
		}
	}
	if snap, _ := core.Default().Counter(client, id).Get(ctx); snap.Exists() {
		t.Error("a refused request wrote a counter")
	}
}

func total(t *testing.T, c *firestore.Client, id string) int64 {
	t.Helper()
	snap, err := core.Default().Counter(c, id).Get(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	n, _ := snap.Data()[core.FieldTotal].(int64)
	return n
}

// TestReconcileFunction corrupts a total, then calls the registered
// Reconcile function as the scheduler would.
func TestReconcileFunction(t *testing.T) {
	ctx := context.Background()
	client := emulatortest.Client(t)
	id := emulatortest.ID(t)
	l := core.Default()
	if _, err := l.Counter(client, id).Set(ctx, map[string]any{core.FieldNumShards: 2, core.FieldTotal: 50}); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Shard(client, id, "", 1).Set(ctx, map[string]any{l.ShardField: 8}); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, base+"/Reconcile", nil)
	req.Header.Set("Origin", "https://evil.example") // a web page's request
	if resp := post(t, req); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a page's POST /Reconcile answered %d, want 403", resp.StatusCode)
	}
	if got := total(t, client, id); got != 50 {
		t.Errorf("total = %d after a page's reconcile, want it untouched, 50", got)
	}
	req, _ = http.NewRequest(http.MethodPost, base+"/Reconcile", nil)
	resp := post(t, req)
	var rep struct {
		Repaired []struct {
			Counter string
			Drift   int64
		}
	}
	json.NewDecoder(resp.Body).Decode(&rep)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("Reconcile answered %d", resp.StatusCode)
	}
	found := false
	for _, d := range rep.Repaired {
		found = found || d.Counter == id && d.Drift == 42
	}
	if !found {
		t.Errorf("report %+v does not list %s with drift 42", rep, id)
	}
	if got := total(t, client, id); got != 8 {
		t.Errorf("total = %d after reconcile, want 8", got)
	}
	req, _ = http.NewRequest(http.MethodGet, base+"/Reconcile", nil)
	if resp := post(t, req); resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET /Reconcile answered %d, want 405", resp.StatusCode)
	}
}
