package increment

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/testkit/layouttest"
)

func newHandler(t *testing.T, cfg Config) (*Handler, *firestore.Client) {
	t.Helper()
	c := emulatortest.Client(t)
	cfg.Layout = layouttest.Public(core.Default())
	return New(c, cfg), c
}

func serve(h http.Handler, method, target, body string, header map[string]string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, target, strings.NewReader(body))
	if body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// step adds 1 to counter id through h, which must answer 200, and says
// which shard took it.
func step(t *testing.T, h http.Handler, id string) int {
	t.Helper()
	w := serve(h, http.MethodPost, "/?counter="+id, "", nil)
	if w.Code != http.StatusOK {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	var resp Response
	if err := json.Unmarshal(w.Body.Bytes(), &resp); err != nil {
		t.Fatal(err)
	}
	return resp.Shard
}

// shards reads every shard of counter id.
func shards(t *testing.T, c *firestore.Client, id string) map[string]int64 {
	t.Helper()
	docs, err := core.Default().Shards(c, id, "").Documents(context.Background()).GetAll()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, d := range docs {
		got[d.Ref.ID], _ = d.Data()[core.DefaultShardField].(int64)
	}
	return got
}

func exists(t *testing.T, c *firestore.Client, id string) bool {
	t.Helper()
	snap, err := core.Default().Counter(c, id).Get(context.Background())
	if err != nil && snap == nil {
		t.Fatal(err)
	}
	return snap.Exists()
}

func jsonInt(n int64) string { b, _ := json.Marshal(n); return string(b) }

func checkError(t *testing.T, w *httptest.ResponseRecorder, status int) {
	t.Helper()
	if w.Code != status {
		t.Errorf("status %d, want %d: %s", w.Code, status, w.Body)
		return
	}
	var body struct{ Error string }
	if !strings.HasPrefix(w.Header().Get("Content-Type"), "application/json") || json.Unmarshal(w.Body.Bytes(), &body) != nil || body.Error == "" {
		t.Errorf("status %d body %q is not JSON {\"error\": ...}", w.Code, w.Body)
	}
}

// TestIncrementFirestoreDown points the handler at an address where nothing
// listens: the client sees 503 with no internal detail.
func TestIncrementFirestoreDown(t *testing.T) {
	c := emulatortest.Unreachable(t)
	dead := os.Getenv("FIRESTORE_EMULATOR_HOST")
	h := New(c, Config{Layout: layouttest.Public(core.Default()), AutoCreate: true})
	r := httptest.NewRequest(http.MethodPost, "/?counter=x", nil)
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r.WithContext(ctx))
	checkError(t, w, http.StatusServiceUnavailable)
	if strings.Contains(w.Body.String(), dead) || strings.Contains(w.Body.String(), "rpc") {
		t.Errorf("error body leaks internals: %s", w.Body)
	}
}
