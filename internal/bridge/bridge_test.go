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
