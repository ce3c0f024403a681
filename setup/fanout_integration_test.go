package setup

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/counter"
	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/fanout"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/testkit/layouttest"
	"github.com/tallycounters/tally/internal/tools/pubsubemu"
)

// delivery is one push of a part, as the test's endpoint saw it.
type delivery struct {
	part  counter.Part
	moved int
}

// pushes stands between the Pub/Sub emulator's push subscription and
// Reconcile?part: it records each delivery, and for the first delivery of
// a part whose seq is in fail, answers 500 without running it (a part
// that failed); in rerun, runs it and answers 500 all the same (a part
// that ran, delivered again); in lose, answers 200 without running it (a
// message lost).
type pushes struct {
	to                http.Handler
	fail, rerun, lose map[int]bool
	mu                sync.Mutex
	seen              []delivery
	inFlight          int // deliveries begun and not yet recorded
}

func (p *pushes) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	p.inFlight++
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		p.inFlight--
		p.mu.Unlock()
	}()
	body, _ := io.ReadAll(r.Body)
	part, _, err := fanout.Decode(bytes.NewReader(body))
	p.mu.Lock()
	first := true
	for _, d := range p.seen {
		first = first && !(d.part.At.Equal(part.At) && d.part.Seq == part.Seq)
	}
	p.mu.Unlock()
	switch {
	case err == nil && first && p.fail[part.Seq]:
		w.WriteHeader(http.StatusInternalServerError)
		p.record(delivery{part: part})
		return
	case err == nil && first && p.lose[part.Seq]:
		p.record(delivery{part: part})
		return
	}
	rec := httptest.NewRecorder()
	r.Body = io.NopCloser(bytes.NewReader(body))
	p.to.ServeHTTP(rec, r)
	var rep counter.PartReport
	json.Unmarshal(rec.Body.Bytes(), &rep)
	p.record(delivery{part: part, moved: rep.Moved})
	code := rec.Code
	if first && p.rerun[part.Seq] {
		code = http.StatusInternalServerError
	}
	w.WriteHeader(code)
}

func (p *pushes) record(d delivery) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seen = append(p.seen, d)
}

// idle reports whether no delivery is in flight: each one that ran is
// recorded, with what it moved.
func (p *pushes) idle() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.inFlight == 0
}

// of is the deliveries of job at's part seq, and what they moved (not of
// a part that goes on with its listing, which bears the seq of the first
// part it lists).
func (p *pushes) of(at time.Time, seq int) (n, moved int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, d := range p.seen {
		if d.part.At.Equal(at) && d.part.Seq == seq && d.part.After == nil {
			n, moved = n+1, moved+d.moved
		}
	}
	return n, moved
}

// TestBoundaryJobFansOutThroughPubSub: the boundary job, started as the
// scheduler starts it, lists 30 due documents in parts of 10 and
// publishes them; the real Pub/Sub emulator pushes each to Reconcile?part.
// A part that fails is delivered again, alone; a part delivered again
// after it ran moves nothing twice; a part whose message is lost leaves
// its documents due, and the job's next run finds them, and moves them.
// Every document moves exactly once. A message that is no part is
// acknowledged, and moves nothing.
func TestBoundaryJobFansOutThroughPubSub(t *testing.T) {
	host := emulatortest.PubSub(t)
	t.Setenv(pubsubemu.EnvHost, host) // for the functions' publisher
	fs := emulatortest.Client(t)
	layout, names := emulatortest.DueDocs(t, fs, 30, 5*time.Second)
	p := &pushes{fail: map[int]bool{1: true}, rerun: map[int]bool{2: true}, lose: map[int]bool{3: true}}
	set := rig(t, host, layout, 10, 0, p)
	due := dueCount(t, fs, layout)

	// A message that is no part, and a part of no job naming the due
	// documents: acknowledged, and nothing moves.
	for _, body := range []string{`{"message":{"data":"bm90IGEgcGFydA=="}}`, pushBody(t, `{"job":"purge","at":"2026-01-01T00:00:00Z","seq":1,"names":["`+names[0]+`"]}`)} {
		req := httptest.NewRequest(http.MethodPost, "/Reconcile?part", bytes.NewBufferString(body))
		rec := httptest.NewRecorder()
		set.Reconcile.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK || !bytes.Contains(rec.Body.Bytes(), []byte(`"dropped"`)) {
			t.Errorf("a message that is no part: %d %s; want 200 and dropped", rec.Code, rec.Body)
		}
	}
	if n := due(); n != 30 {
		t.Fatalf("%d documents due after the messages that are no parts, want all 30", n)
	}

	first := startJob(t, set, "?windows")
	if first.Due != 30 || first.Parts != 3 || first.Fanout != FanoutPubSub {
		t.Fatalf("the boundary job: %+v; want 30 due in 3 parts, through Pub/Sub", first)
	}
	emulatortest.Until(t, "parts 1 and 2 delivered twice, part 3 once", func() (any, bool) {
		n1, _ := p.of(first.At, 1)
		n2, _ := p.of(first.At, 2)
		n3, _ := p.of(first.At, 3)
		return []int{n1, n2, n3}, n1 >= 2 && n2 >= 2 && n3 >= 1
	})
	moved := 0
	for seq := 1; seq <= 3; seq++ {
		n, m := p.of(first.At, seq)
		moved += m
		if seq == 3 && (n != 1 || m != 0) {
			t.Errorf("the lost part: %d deliveries, %d moved; want 1, 0", n, m)
		}
	}
	if moved != 20 {
		t.Errorf("parts 1 and 2 moved %d documents in all their deliveries, want 20: each once", moved)
	}
	if n := due(); n != 10 {
		t.Fatalf("%d documents due after the job, want the lost part's 10", n)
	}

	again := startJob(t, set, "?windows")
	if again.Due != 10 || again.Parts != 1 {
		t.Fatalf("the job's next run: %+v; want the lost part's 10 due, in 1 part", again)
	}
	emulatortest.Until(t, "the next run's part moves the lost part's documents", func() (any, bool) {
		_, m := p.of(again.At, 1)
		return m, m == 10
	})
	if n := due(); n != 0 {
		t.Errorf("%d documents due at the end, want 0", n)
	}
}

// rig builds the functions of layout, publishing parts of at most size to
// a topic of the test's own on the Pub/Sub emulator at host, listing for
// listFor at a time, and a push subscription of the topic to p, which
// hands each part to the functions' Reconcile?part.
func rig(t *testing.T, host string, layout core.Layout, size int, listFor time.Duration, p *pushes) *Set {
	t.Helper()
	ctx := context.Background()
	topic := "parts-" + emulatortest.ID(t)[len(t.Name())+1:]
	set, err := New(ctx, Config{Project: emulatortest.Project, Database: "(default)", Layout: layouttest.Public(layout), DefaultShards: 1,
		Spacing: 100 * time.Millisecond, CacheTTL: time.Second, PartsTopic: topic, PartSize: size, ListFor: listFor}, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { set.Close() })
	p.to = set.Reconcile
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	ps, err := pubsubemu.Client(ctx, host, emulatortest.Project)
	if err != nil {
		t.Fatal(err)
	}
	defer ps.Close()
	if err := pubsubemu.Push(ctx, ps, emulatortest.Project, topic, topic+"-push", srv.URL+"/Reconcile?part", 60*time.Second); err != nil {
		t.Fatal(err)
	}
	return set
}

// dueCount counts the documents of layout due now.
func dueCount(t *testing.T, fs *firestore.Client, layout core.Layout) func() int {
	c := counter.New(fs, counter.Options{Layout: layouttest.Public(layout)})
	return func() int {
		t.Helper()
		rep, err := c.Split(context.Background(), counter.Part{Job: counter.JobWindows, At: time.Now(), Seq: 1}, 1000, time.Time{},
			func(counter.Part) error { return nil })
		if err != nil {
			t.Fatal(err)
		}
		return rep.Due
	}
}

// startJob starts a job with a POST to Reconcile, as the scheduler does.
func startJob(t *testing.T, set *Set, query string) JobReport {
	t.Helper()
	rec := httptest.NewRecorder()
	set.Reconcile.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/Reconcile"+query, nil))
	var rep JobReport
	if err := json.Unmarshal(rec.Body.Bytes(), &rep); err != nil || rec.Code != http.StatusOK {
		t.Fatalf("POST /Reconcile%s: %d %s", query, rec.Code, rec.Body)
	}
	return rep
}

// pushBody is a push subscription's body of a message of data.
func pushBody(t *testing.T, data string) string {
	b, err := json.Marshal(map[string]any{"message": map[string]any{"data": []byte(data), "messageId": "1"}, "subscription": "s"})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestReconcileFansOutThroughPubSub: Reconcile, started as the scheduler
// starts it, lists its counters in parts of 2 and publishes them; each
// part, pushed by the real Pub/Sub emulator, brings its counters' totals
// to their shards' sums, and its answer lists those that had drifted.
func TestReconcileFansOutThroughPubSub(t *testing.T) {
	host := emulatortest.PubSub(t)
	t.Setenv(pubsubemu.EnvHost, host)
	fs := emulatortest.Client(t)
	ctx := context.Background()
	layout := core.Default()
	layout.Collection = "c" + emulatortest.ID(t)[len(t.Name())+1:]
	for i := range 5 {
		id := fmt.Sprintf("k%d", i)
		if _, err := layout.Counter(fs, id).Set(ctx, map[string]any{core.FieldNumShards: 1, core.FieldTotal: 100}); err != nil {
			t.Fatal(err)
		}
		if _, err := layout.Shard(fs, id, "", 0).Set(ctx, map[string]any{layout.ShardField: i}); err != nil {
			t.Fatal(err)
		}
	}
	p := &pushes{}
	set := rig(t, host, layout, 2, 0, p)
	rep := startJob(t, set, "")
	if rep.Due != 5 || rep.Parts != 3 || rep.Job != counter.JobReconcile {
		t.Fatalf("Reconcile: %+v; want 5 counters in 3 parts", rep)
	}
	emulatortest.Until(t, "every part reconciled", func() (any, bool) {
		moved := 0
		for seq := 1; seq <= 3; seq++ {
			_, m := p.of(rep.At, seq)
			moved += m
		}
		return moved, moved == 5
	})
	for i := range 5 {
		snap, err := layout.Counter(fs, fmt.Sprintf("k%d", i)).Get(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := snap.Data()[core.FieldTotal].(int64); got != int64(i) {
			t.Errorf("k%d: total %d, want its shard's %d", i, got, i)
		}
	}
}

// TestListingGoesOnThroughPubSub: a listing out of time after each
// document (ListFor 1ns) publishes a part that goes on with it, and each
// such part, pushed by the Pub/Sub emulator, lists the next: the 12 due
// documents are each moved once, in as many parts of one.
func TestListingGoesOnThroughPubSub(t *testing.T) {
	host := emulatortest.PubSub(t)
	t.Setenv(pubsubemu.EnvHost, host)
	fs := emulatortest.Client(t)
	layout, _ := emulatortest.DueDocs(t, fs, 12, 5*time.Second)
	p := &pushes{}
	set := rig(t, host, layout, 5, time.Nanosecond, p)
	rep := startJob(t, set, "?windows")
	if rep.Due != 1 || rep.Parts != 1 || !rep.More {
		t.Fatalf("the job's first listing: %+v; want 1 due, in 1 part, and more", rep)
	}
	due := dueCount(t, fs, layout)
	// A part's move commits before its delivery is recorded: wait for both.
	emulatortest.Until(t, "every document moved, and its delivery recorded", func() (any, bool) {
		n := due()
		return n, n == 0 && p.idle()
	})
	moved, listings := 0, 0
	for seq := 1; seq <= 30; seq++ {
		_, m := p.of(rep.At, seq)
		moved += m
	}
	p.mu.Lock()
	for _, d := range p.seen {
		if d.part.After != nil {
			listings++
		}
	}
	p.mu.Unlock()
	if moved != 12 || listings < 11 {
		t.Errorf("the parts moved %d documents, in %d parts that went on listing; want 12, each once, and 11 or more", moved, listings)
	}
}

// TestBoundaryJobInProcess: with no topic, the boundary job runs its parts
// in the POST that starts it, and answers with what they did.
func TestBoundaryJobInProcess(t *testing.T) {
	fs := emulatortest.Client(t)
	layout, _ := emulatortest.DueDocs(t, fs, 12, 5*time.Second)
	set, err := New(context.Background(), Config{Project: emulatortest.Project, Database: "(default)", Layout: layouttest.Public(layout),
		DefaultShards: 1, Spacing: 100 * time.Millisecond, CacheTTL: time.Second, PartSize: 5}, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	if mode, topic := set.Fanout(); mode != FanoutInProcess || topic != "" {
		t.Errorf("Fanout() = %s, %q; want in-process", mode, topic)
	}
	rep := startJob(t, set, "?windows")
	if rep.Fanout != FanoutInProcess || rep.Due != 12 || rep.Parts != 3 || rep.Moved != 12 || rep.Failed != 0 {
		t.Errorf("the boundary job in-process: %+v; want 12 due, in 3 parts, all moved", rep)
	}
	if n := dueCount(t, fs, layout)(); n != 0 {
		t.Errorf("%d documents due after the job, want 0", n)
	}
}

// TestPartFailingForGoodIsNotDeliveredAgain: a part of Reconcile with a
// counter no fold can write (its shards hold no shard field: its total
// stays) and one it can is answered 200, the first logged as failed for
// good: Pub/Sub does not deliver it again, forever.
func TestPartFailingForGoodIsNotDeliveredAgain(t *testing.T) {
	fs := emulatortest.Client(t)
	ctx := context.Background()
	layout := core.Default()
	layout.Collection = "g" + emulatortest.ID(t)[len(t.Name())+1:]
	for id, shard := range map[string]map[string]any{"bad": {"Count": int64(3)}, "good": {core.DefaultShardField: int64(3)}} {
		if _, err := layout.Counter(fs, id).Set(ctx, map[string]any{core.FieldNumShards: 1, core.FieldTotal: int64(5)}); err != nil {
			t.Fatal(err)
		}
		if _, err := layout.Shard(fs, id, "", 0).Set(ctx, shard); err != nil {
			t.Fatal(err)
		}
	}
	set, err := New(ctx, Config{Project: emulatortest.Project, Database: "(default)", Layout: layouttest.Public(layout), DefaultShards: 1,
		Spacing: time.Millisecond, CacheTTL: time.Second, PartSize: 10}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { set.Close() })
	body := pushBody(t, `{"job":"reconcile","at":"`+time.Now().UTC().Format(time.RFC3339Nano)+`","seq":1,"names":["bad","good"]}`)
	rec := httptest.NewRecorder()
	set.Reconcile.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/Reconcile?part", bytes.NewBufferString(body)))
	if rec.Code != http.StatusOK || !bytes.Contains(rec.Body.Bytes(), []byte(`"failed":1`)) {
		t.Errorf("a part with a counter that fails for good: %d %s; want 200, one failed", rec.Code, rec.Body)
	}
	if snap, err := layout.Counter(fs, "good").Get(ctx); err != nil || snap.Data()[core.FieldTotal] != int64(3) {
		t.Errorf("the counter it can fold: %v, %v; want its total 3", snap.Data(), err)
	}
}
