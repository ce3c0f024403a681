package bridge

import (
	"context"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// emulatorPost is a request shaped like the emulator's deliveries.
func emulatorPost(body []byte) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/functions/projects/p/triggers/k",
		strings.NewReader(base64.StdEncoding.EncodeToString(body)))
	r.Header.Set("Content-Type", "application/protobuf")
	r.Header.Set("ce-datacontenttype", "application/protobuf")
	r.Header.Set("ce-id", "ev-1")
	r.Header.Set("ce-type", "google.cloud.firestore.document.v1.written")
	r.Header.Set("ce-document", "counters/c/shards/1")
	r.Header.Set("User-Agent", "emulator")
	return r
}

type received struct {
	mu     sync.Mutex
	bodies [][]byte
	header []http.Header
}

func TestBridgeDeliversRawProtobufWithAttributes(t *testing.T) {
	var got received
	fn := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got.mu.Lock()
		got.bodies, got.header = append(got.bodies, b), append(got.header, r.Header.Clone())
		got.mu.Unlock()
	}))
	defer fn.Close()
	b := New(Options{Target: fn.URL})
	payload := []byte{0x0a, 0x00, 0xff, 0x10}
	w := httptest.NewRecorder()
	b.ServeHTTP(w, emulatorPost(payload))
	if w.Code/100 != 2 {
		t.Fatalf("bridge answered the emulator %d", w.Code)
	}
	if err := b.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(got.bodies) != 1 || string(got.bodies[0]) != string(payload) {
		t.Fatalf("function got %q, want the raw protobuf %q", got.bodies, payload)
	}
	h := got.header[0]
	if h.Get("ce-datacontenttype") != "" || h.Get("Content-Type") != "application/protobuf" ||
		h.Get("ce-id") != "ev-1" || h.Get("ce-document") != "counters/c/shards/1" || h.Get("User-Agent") == "emulator" {
		t.Errorf("headers passed on: %v", h)
	}
}

func TestBridgeRetriesFailures(t *testing.T) {
	var calls atomic.Int32
	fn := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) <= 3 {
			http.Error(w, "try again", http.StatusInternalServerError)
		}
	}))
	defer fn.Close()
	b := New(Options{Target: fn.URL, MinBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond})
	b.ServeHTTP(httptest.NewRecorder(), emulatorPost([]byte("x")))
	b.Wait(context.Background())
	if st := b.Stats(); calls.Load() != 4 || st.Failures != 3 || st.Dropped != 0 {
		t.Errorf("%d calls, stats %+v; want 3 failures then a success", calls.Load(), st)
	}
}

func TestBridgeDropsAfterMaxAttempts(t *testing.T) {
	fn := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "broken", http.StatusInternalServerError)
	}))
	defer fn.Close()
	b := New(Options{Target: fn.URL, MaxAttempts: 3, MinBackoff: time.Millisecond})
	b.ServeHTTP(httptest.NewRecorder(), emulatorPost([]byte("x")))
	b.Wait(context.Background())
	if st := b.Stats(); st.Deliveries != 3 || st.Dropped != 1 {
		t.Errorf("stats %+v; want 3 attempts and the event dropped", st)
	}
}

func TestBridgeFaults(t *testing.T) {
	var calls atomic.Int32
	fn := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { calls.Add(1) }))
	defer fn.Close()
	b := New(Options{Target: fn.URL, Faults: Faults{DuplicateRate: 1, DelayRate: 1, MaxDelay: time.Millisecond}})
	for i := 0; i < 10; i++ {
		b.ServeHTTP(httptest.NewRecorder(), emulatorPost([]byte("x")))
	}
	b.Wait(context.Background())
	if st := b.Stats(); calls.Load() != 20 || st.Duplicated != 10 || st.Delayed != 20 {
		t.Errorf("%d calls, stats %+v; want every event twice, all delayed", calls.Load(), st)
	}
}

// TestBridgeRefusesWhatEventarcWould: an event past Eventarc's size limit
// is refused (413) and never delivered; an event the function refuses
// with a 4xx is dropped at once, not retried, while a 503 and a 429 are
// retried.
func TestBridgeRefusesWhatEventarcWould(t *testing.T) {
	var calls sync.Map // status asked for -> deliveries
	fn := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		status := map[string]int{"ok": 204, "bad": 400, "gone": 413, "busy": 503, "slow": 429}[r.Header.Get("ce-subject")]
		n, _ := calls.LoadOrStore(r.Header.Get("ce-subject"), new(atomic.Int64))
		if n.(*atomic.Int64).Add(1) > 2 {
			status = 204
		}
		w.WriteHeader(status)
	}))
	defer fn.Close()
	b := New(Options{Target: fn.URL, MinBackoff: time.Millisecond, MaxBackoff: time.Millisecond, MaxEventBytes: 1000})
	big := emulatorPost(make([]byte, 1001))
	w := httptest.NewRecorder()
	b.ServeHTTP(w, big)
	if w.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("an event of 1,001 bytes past a limit of 1,000: %d, want 413", w.Code)
	}
	for _, subject := range []string{"ok", "bad", "gone", "busy", "slow"} {
		r := emulatorPost([]byte{1})
		r.Header.Set("ce-subject", subject)
		b.ServeHTTP(httptest.NewRecorder(), r)
	}
	if err := b.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	for subject, want := range map[string]int64{"ok": 1, "bad": 1, "gone": 1, "busy": 3, "slow": 3} {
		n, _ := calls.Load(subject)
		if got := n.(*atomic.Int64).Load(); got != want {
			t.Errorf("%s: delivered %d times, want %d", subject, got, want)
		}
	}
	if st := b.Stats(); st.Refused != 1 || st.Received != 5 || st.Dropped != 2 {
		t.Errorf("stats = %+v; want 1 refused, 5 received, 2 dropped", st)
	}
}
