package stack

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/firestore"
	"github.com/google/uuid"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tallycounters/tally/counter"
	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/listen"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/testkit/layouttest"
	"github.com/tallycounters/tally/internal/tools/emulator"
	"github.com/tallycounters/tally/setup"
)

const docsWindow = 300 * time.Millisecond

// startDocs starts the stack with counts on documents: likes, views and
// shares on posts, likes on users/*/posts, each post on four shards (the
// counter on one shard has tests of its own).
func startDocs(t *testing.T) (*Stack, *firestore.Client) {
	t.Helper()
	paths := emulatortest.RequirePaths(t)
	return startConfig(t, paths, envConfig(t, map[string]string{
		"TALLY_COUNTS": "posts:likes,views,shares;users/*/posts:likes", "TALLY_SHARDS_COLLECTION": "tally_shards",
		"TALLY_ROLLUP_WINDOW": docsWindow.String(), "TALLY_SHARD_CACHE_TTL": "300ms", "TALLY_AUTO_GROW": "false", "TALLY_DEFAULT_SHARDS": "4",
	}))
}

// envConfig is the configuration serve reads from an environment that
// holds vars and nothing else of tally's: each test's own, so that tests
// run in parallel.
func envConfig(t testing.TB, vars map[string]string) setup.Config {
	t.Helper()
	cfg, err := setup.ConfigFromEnv(func(k string) string { return vars[k] })
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// startCounts starts the stack on the emulator with counts (TALLY_COUNTS)
// and a fold spacing of 300 ms, to be stopped when the test ends, and
// answers its configuration and a client of its emulator.
func startCounts(t testing.TB, counts string) (setup.Config, *firestore.Client) {
	t.Helper()
	paths := emulatortest.RequirePaths(t)
	cfg := envConfig(t, map[string]string{"TALLY_COUNTS": counts, "TALLY_ROLLUP_WINDOW": "300ms"})
	_, client := startConfig(t, paths, cfg)
	return cfg, client
}

// startConfig starts the stack with cfg, for the test's project, to be
// stopped when the test ends, and a client of its emulator.
func startConfig(t testing.TB, paths emulator.Paths, cfg setup.Config) (*Stack, *firestore.Client) {
	t.Helper()
	cfg.Project = emulatortest.Project
	return startOptions(t, Options{Config: cfg, Emulator: paths, Logs: os.Stderr})
}

// startOptions starts the stack with o, to be stopped when the test ends,
// and a client of its emulator.
func startOptions(t testing.TB, o Options) (*Stack, *firestore.Client) {
	t.Helper()
	s, err := Start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := s.Stop(ctx); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	return s, emulatortest.ClientAt(t, s.EmulatorHost, emulatortest.Project)
}

// post is one Increment request's answer.
func post(t testing.TB, s *Stack, body string) (int, string) {
	t.Helper()
	return send(t, s, body, "")
}

// increment is the answer to an increment sent as a careful client sends
// it: with an Idempotency-Key, and sent again with the same key while the
// answer is that it may not have counted (503: nothing was written; 504:
// Firestore did not confirm it), as a busy emulator may answer, so that
// it counts once however slow the emulator is.
func increment(t testing.TB, s *Stack, body string) (int, string) {
	t.Helper()
	key := "test-" + uuid.NewString()
	for deadline := time.Now().Add(emulatortest.Liveness); ; {
		code, answer := send(t, s, body, key)
		if code != http.StatusServiceUnavailable && code != http.StatusGatewayTimeout || time.Now().After(deadline) {
			return code, answer
		}
		t.Logf("sending again with the same key: %d %s", code, answer)
	}
}

// send is one Increment request's answer, with key as its
// Idempotency-Key unless it is "".
func send(t testing.TB, s *Stack, body, key string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.FunctionsURL+"/Increment", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestCountsOnDocuments runs counts on the app's documents through the
// whole local stack, with the emulator's own trigger delivery on each
// counted collection.
func TestCountsOnDocuments(t *testing.T) {
	t.Parallel()
	emulatortest.Require(t)
	s, fs := startDocs(t)
	ctx := context.Background()
	id := emulatortest.ID(t)

	t.Run("exact, with the app's writes kept", func(t *testing.T) {
		doc := fs.Doc("posts/" + id)
		if _, err := doc.Create(ctx, map[string]any{"title": "v0", "likes": 0}); err != nil {
			t.Fatal(err)
		}
		written := watchWritten(t, doc)
		// likes and views are incremented from many requests at once, shares
		// never: shards hold different subsets of the counts. Meanwhile the
		// app edits the post's title, racing the folds. The second round
		// starts once the first is folded, so the post is written at least
		// twice however late the events come, and the window between the
		// writes is seen.
		var mu sync.Mutex
		acked := map[string]int64{}
		var data map[string]any
		var rounds []time.Time // _tally.written once each round is folded
		for round := range 2 {
			var wg sync.WaitGroup
			for w := range 24 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range 12 {
						field := []string{"likes", "views"}[(w+i+round)%2]
						by := int64(i%3 + 1)
						code, body := increment(t, s, fmt.Sprintf(`{"counter":"posts/%s","field":%q,"by":%d}`, id, field, by))
						if code != http.StatusOK {
							t.Errorf("increment: %d %s", code, body)
							continue
						}
						mu.Lock()
						acked[field] += by
						mu.Unlock()
					}
				}()
			}
			for i := 1; i <= 10; i++ {
				title := fmt.Sprintf("v%d", round*10+i)
				if _, err := doc.Update(ctx, []firestore.Update{{Path: "title", Value: title}}); err != nil {
					t.Fatal(err)
				}
				time.Sleep(20 * time.Millisecond)
			}
			wg.Wait()
			data = waitCounts(t, doc, acked)
			bk, _ := data[core.FieldBookkeeping].(map[string]any)
			w, _ := bk[core.FieldWritten].(time.Time)
			rounds = append(rounds, w)
		}
		if data["title"] != "v20" {
			t.Errorf("title = %v, want the app's last edit v20", data["title"])
		}
		if data["shares"] != int64(0) {
			t.Errorf("shares = %v, want 0: no shard holds it, and the post had none", data["shares"])
		}
		bk, _ := data[core.FieldBookkeeping].(map[string]any)
		if _, ok := bk[core.FieldAsOf].(time.Time); !ok || len(data) != 5 || len(bk) != 3 || bk[core.FieldLife] == nil {
			t.Errorf("document = %v; want title, likes, views, shares and _tally{as_of, written, life}", data)
		}
		for _, f := range []string{"likes", "views"} {
			sum, err := counterClient(fs).Sum(ctx, "posts/"+id, f)
			if err != nil || sum != acked[f] {
				t.Errorf("sum of %s = %d (%v), want %d", f, sum, err, acked[f])
			}
		}
		// One write a window, for all the counts of the document. The reads
		// after each round show two writes whatever the listener missed (a
		// stream the emulator stalls is read again only after a while); what
		// it saw between them is checked too, and a write it missed only
		// widens a gap.
		if !rounds[1].After(rounds[0]) {
			t.Errorf("_tally.written is %v after both rounds: the second round's counts were not a write of their own", rounds[0])
		}
		ws := mergeTimes(written(rounds[1]), rounds)
		t.Logf("%d tally writes seen, %d likes and %d views acknowledged", len(ws), acked["likes"], acked["views"])
		for i := 1; i < len(ws); i++ {
			if gap := ws[i].Sub(ws[i-1]); gap < docsWindow {
				t.Errorf("tally writes %d and %d of the post are %v apart, within the %v window", i-1, i, gap, docsWindow)
			}
		}
	})

	t.Run("nested collection", func(t *testing.T) {
		doc := fs.Doc("users/u1/posts/" + id)
		if _, err := doc.Create(ctx, map[string]any{"title": "mine"}); err != nil {
			t.Fatal(err)
		}
		for range 3 {
			if code, body := increment(t, s, fmt.Sprintf(`{"counter":"users/u1/posts/%s","field":"likes"}`, id)); code != http.StatusOK {
				t.Fatalf("increment: %d %s", code, body)
			}
		}
		waitCounts(t, doc, map[string]int64{"likes": 3})
	})

	t.Run("refused, nothing written", func(t *testing.T) {
		for _, c := range []struct {
			body string
			code int
			want string
		}{
			{`{"counter":"posts/nope-` + id + `","field":"likes"}`, http.StatusNotFound, "does not exist"},
			{`{"counter":"comments/` + id + `","field":"likes"}`, http.StatusBadRequest, "counts are declared on posts (likes, views, shares); users/*/posts (likes)"},
			{`{"counter":"posts/` + id + `","field":"bogus"}`, http.StatusBadRequest, `"bogus" is not counted on posts; its counts are likes, views, shares`},
			{`{"counter":"posts/` + id + `"}`, http.StatusBadRequest, "give the field to count"},
			{`{"counter":"users/u1/posts/` + id + `","field":"views"}`, http.StatusBadRequest, "its counts are likes"},
		} {
			code, body := post(t, s, c.body)
			var answer struct{ Error string }
			if code != c.code || json.Unmarshal([]byte(body), &answer) != nil || !strings.Contains(answer.Error, c.want) {
				t.Errorf("%s: %d %s; want %d saying %q", c.body, code, body, c.code, c.want)
			}
		}
		for _, p := range []string{"posts/nope-" + id, "comments/" + id} {
			if snaps, _ := fs.Doc(p).Collection("tally_shards").Documents(ctx).GetAll(); len(snaps) > 0 {
				t.Errorf("a refused increment wrote a shard of %s", p)
			}
			if _, err := fs.Doc(p).Get(ctx); status.Code(err) != codes.NotFound {
				t.Errorf("%s was created: %v", p, err)
			}
		}
	})

	t.Run("a deleted post stays deleted", func(t *testing.T) {
		name := "posts/gone-" + id
		doc := fs.Doc(name)
		if _, err := doc.Create(ctx, map[string]any{"title": "doomed"}); err != nil {
			t.Fatal(err)
		}
		if code, body := increment(t, s, `{"counter":"`+name+`","field":"views","by":5}`); code != http.StatusOK {
			t.Fatalf("increment: %d %s", code, body)
		}
		waitCounts(t, doc, map[string]int64{"views": 5})
		life := doc.Collection(core.LivesCollection).Doc(emulatortest.Life(t, core.MustParse(s.Config().Layout), fs, name))
		if _, err := doc.Delete(ctx); err != nil {
			t.Fatal(err)
		}
		// Writes in flight when the app deleted it: their events are
		// answered, and nothing brings the post back.
		for n := range 3 {
			ref := life.Collection("tally_shards").Doc(fmt.Sprint(n))
			if _, err := ref.Set(ctx, map[string]any{"views": firestore.Increment(1)}, firestore.MergeAll); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(docsWindow) // the shard cache expires: Increment reads the post again
		if code, body := post(t, s, `{"counter":"`+name+`","field":"views"}`); code != http.StatusNotFound {
			t.Errorf("increment of a deleted post: %d %s, want 404", code, body)
		}
		waitDelivered(t, s)
		if _, err := doc.Get(ctx); status.Code(err) != codes.NotFound {
			t.Fatalf("the deleted post came back: %v", err)
		}
		// Reconcile removes what tally kept under it.
		var reconciled []string
		err := counterClient(fs).ReconcileAll(ctx, func(d counter.Drift, err error) {
			reconciled = append(reconciled, d.Counter)
		})
		if err != nil {
			t.Fatal(err)
		}
		if snaps, _ := life.Collection("tally_shards").Documents(ctx).GetAll(); len(snaps) > 0 {
			t.Errorf("%d shards of the deleted post are left after ReconcileAll", len(snaps))
		}
		if _, err := doc.Get(ctx); status.Code(err) != codes.NotFound {
			t.Errorf("ReconcileAll brought the post back: %v", err)
		}
		if !strings.Contains(strings.Join(reconciled, " "), "posts/"+id) {
			t.Errorf("ReconcileAll reconciled %v, not posts/%s", reconciled, id)
		}
	})
}

// watchWritten listens to doc and returns a function that waits until the
// listener has seen tally's write at last (a listener may lag a read), for
// at most emulatortest.Liveness (a liveness bound), and returns what it has seen of
// tally's writes: each distinct _tally.written, in order. A listen stream
// the emulator cancels is opened again, as a client's would be; a write
// missed meanwhile only widens a gap the test checks.
func watchWritten(t *testing.T, doc *firestore.DocumentRef) func(last time.Time) []time.Time {
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	var seen []time.Time
	var failed error
	done := make(chan struct{})
	go func() {
		defer close(done)
		for snap, err := range listen.Snapshots(ctx, doc) {
			if err != nil {
				mu.Lock()
				failed = err
				mu.Unlock()
				return
			}
			bk, _ := snap.Data()[core.FieldBookkeeping].(map[string]any)
			w, ok := bk[core.FieldWritten].(time.Time)
			mu.Lock()
			if ok && (len(seen) == 0 || !w.Equal(seen[len(seen)-1])) {
				seen = append(seen, w)
			}
			mu.Unlock()
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return func(last time.Time) []time.Time {
		for deadline := time.Now().Add(emulatortest.Liveness); ; time.Sleep(50 * time.Millisecond) {
			mu.Lock()
			ws := append([]time.Time(nil), seen...)
			err := failed
			mu.Unlock()
			caughtUp := len(ws) > 0 && !ws[len(ws)-1].Before(last)
			if err != nil || caughtUp || time.Now().After(deadline) {
				if err != nil {
					t.Errorf("the listener on %s failed: %v", doc.Path, err)
				} else if !caughtUp {
					t.Errorf("the listener on %s did not see tally's write of %v within a minute", doc.Path, last)
				}
				return ws
			}
		}
	}
}

// mergeTimes returns the distinct times of a and b, in order.
func mergeTimes(a, b []time.Time) []time.Time {
	all := slices.SortedFunc(slices.Values(append(slices.Clone(a), b...)), time.Time.Compare)
	return slices.CompactFunc(all, time.Time.Equal)
}

// waitCounts reads doc until each count is as wanted, or fails after a
// minute (a liveness bound, not a measurement), and returns its data.
func waitCounts(t *testing.T, doc *firestore.DocumentRef, want map[string]int64) map[string]any {
	t.Helper()
	deadline := time.Now().Add(emulatortest.Liveness)
	for {
		snap, err := doc.Get(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		data := snap.Data()
		ok := true
		for f, n := range want {
			if got, _ := data[f].(int64); got != n {
				ok = false
			}
		}
		if ok {
			return data
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s = %v, want counts %v", doc.Path, data, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitDelivered waits until the bridge has answered every event the
// emulator handed it.
func waitDelivered(t *testing.T, s *Stack) {
	t.Helper()
	time.Sleep(time.Second) // the emulator hands its events over within this, unloaded
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.Bridge.Wait(ctx); err != nil {
		t.Fatal(err)
	}
}

func counterClient(fs *firestore.Client) *counter.Client {
	l := core.Default()
	l.Docs, _ = core.ParseCounts("posts:likes,views,shares;users/*/posts:likes")
	l.ShardsName = "tally_shards"
	return counter.New(fs, counter.Options{Layout: layouttest.Public(l), Spacing: docsWindow, ShardCacheTTL: 300 * time.Millisecond})
}
