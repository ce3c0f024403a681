package increment

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
)

func TestIncrementCreatesAndGrowsShards(t *testing.T) {
	const shardsMade = 10
	h, c := newHandler(t, Config{AutoCreate: true, DefaultShards: shardsMade})
	id := emulatortest.ID(t)
	var want int64
	for i := 1; i <= 40; i++ {
		by := int64(i%7 - 2)
		if by == 0 {
			by = 1
		}
		want += by
		w := serve(h, http.MethodPost, "/", `{"counter":"`+id+`","by":`+jsonInt(by)+`}`, nil)
		if w.Code != http.StatusOK {
			t.Fatalf("status %d: %s", w.Code, w.Body)
		}
		var resp Response
		if err := json.Unmarshal(w.Body.Bytes(), &resp); err != nil {
			t.Fatal(err)
		}
		if resp.Counter != id || resp.By != by || resp.Shard < 0 || resp.Shard >= shardsMade {
			t.Fatalf("response %+v", resp)
		}
	}
	var sum int64
	got := shards(t, c, id)
	for _, n := range got {
		sum += n
	}
	if sum != want {
		t.Errorf("shards sum to %d, want %d (%v)", sum, want, got)
	}
	if len(got) < 2 {
		t.Errorf("40 increments landed on %d shard(s)", len(got))
	}
	snap, err := core.Default().Counter(c, id).Get(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := snap.DataAt(core.FieldNumShards); n != int64(shardsMade) {
		t.Errorf("num_shards = %v, want %d", n, shardsMade)
	}
}

func TestIncrementQueryForm(t *testing.T) {
	h, c := newHandler(t, Config{AutoCreate: true})
	id := emulatortest.ID(t)
	w := serve(h, http.MethodPost, "/?counter="+id+"&by=5", "", nil)
	if w.Code != http.StatusOK {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	var sum int64
	for _, n := range shards(t, c, id) {
		sum += n
	}
	if sum != 5 {
		t.Errorf("shards sum to %d, want 5", sum)
	}
}

func TestIncrementUsesNumShards(t *testing.T) {
	h, c := newHandler(t, Config{AutoCreate: true})
	id := emulatortest.ID(t)
	if _, err := core.Default().Counter(c, id).Set(context.Background(), map[string]any{core.FieldNumShards: 3}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 30; i++ {
		if w := serve(h, http.MethodPost, "/?counter="+id, "", nil); w.Code != http.StatusOK {
			t.Fatalf("status %d: %s", w.Code, w.Body)
		}
	}
	for shard := range shards(t, c, id) {
		if shard != "0" && shard != "1" && shard != "2" {
			t.Errorf("wrote shard %s of a 3-shard counter", shard)
		}
	}
}

// TestIncrementCachesNumShards shows that num_shards is read once per expiry,
// not per request: a change is seen only after the cache expires.
func TestIncrementCachesNumShards(t *testing.T) {
	now := time.Now()
	h, c := newHandler(t, Config{AutoCreate: true, CacheTTL: time.Hour, DefaultShards: 10, Now: func() time.Time { return now }})
	id := emulatortest.ID(t)
	serve(h, http.MethodPost, "/?counter="+id, "", nil)
	if _, err := core.Default().Counter(c, id).Update(context.Background(), []firestore.Update{{Path: core.FieldNumShards, Value: 1}}); err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for i := 0; i < 50; i++ {
		var resp Response
		json.Unmarshal(serve(h, http.MethodPost, "/?counter="+id, "", nil).Body.Bytes(), &resp)
		seen[resp.Shard] = true
	}
	if len(seen) < 2 {
		t.Errorf("within the expiry, 50 increments used shards %v; the cached 10 shards should spread them", seen)
	}
	now = now.Add(2 * time.Hour)
	for i := 0; i < 20; i++ {
		var resp Response
		json.Unmarshal(serve(h, http.MethodPost, "/?counter="+id, "", nil).Body.Bytes(), &resp)
		if resp.Shard != 0 {
			t.Fatalf("after expiry, used shard %d of a 1-shard counter", resp.Shard)
		}
	}
}

func TestIncrementNoAutoCreate(t *testing.T) {
	h, c := newHandler(t, Config{AutoCreate: false})
	id := emulatortest.ID(t)
	w := serve(h, http.MethodPost, "/", `{"counter":"`+id+`"}`, nil)
	checkError(t, w, http.StatusNotFound)
	if exists(t, c, id) || len(shards(t, c, id)) > 0 {
		t.Error("a 404 wrote to Firestore")
	}
}

// TestIncrementBadRequestsWriteNothing sends each kind of bad request for one
// counter id and checks that neither the parent nor a shard appeared.
func TestIncrementBadRequestsWriteNothing(t *testing.T) {
	h, c := newHandler(t, Config{AutoCreate: true})
	id := emulatortest.ID(t)
	bad := []struct {
		method, target, body string
		header               map[string]string
		status               int
	}{
		{http.MethodGet, "/?counter=" + id, "", nil, 405},
		{http.MethodPut, "/", `{"counter":"` + id + `"}`, nil, 405},
		{http.MethodPost, "/", `{"counter":"` + id + `","by":1001}`, nil, 400},
		{http.MethodPost, "/", `{"counter":"` + id + `","by":0}`, nil, 400},
		{http.MethodPost, "/", `{"counter":"` + id + `","by":2.5}`, nil, 400},
		{http.MethodPost, "/", `{"counter":"` + id + `","by":null}`, nil, 400},
		{http.MethodPost, "/", `{"counter":"` + id + `","vote":null}`, nil, 400},
		{http.MethodPost, "/", `{"counter":"` + id + `","once":null}`, nil, 400},
		{http.MethodPost, "/", `{"counter":"` + id + `/shards/1"}`, nil, 400},
		{http.MethodPost, "/", `{"counter":"` + id + `"`, nil, 400},
		{http.MethodPost, "/", `{"counter":"` + id + `"}`, map[string]string{"Content-Type": "text/plain"}, 415},
		{http.MethodPost, "/", `{"counter":"` + id + `","pad":"` + strings.Repeat("x", maxBody) + `"}`, nil, 413},
		{http.MethodOptions, "/?counter=" + id, "", map[string]string{"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"}, 403},
		// The query string is as strict as the body: an unlike sent there
		// with no sign-in, a key the body refuses, a key in other case.
		{http.MethodPost, "/?counter=" + id + "&vote=false", "", nil, 400},
		{http.MethodPost, "/?counter=" + id + "&foo=1", "", nil, 400},
		{http.MethodPost, "/?counter=" + id + "&Counter=zz", "", nil, 400},
		{http.MethodPost, "/?counter=" + id + "&vote=true&by=2", "", nil, 400},
	}
	for _, b := range bad {
		w := serve(h, b.method, b.target, b.body, b.header)
		checkError(t, w, b.status)
	}
	if exists(t, c, id) || len(shards(t, c, id)) > 0 {
		t.Error("a rejected request wrote to Firestore")
	}
}

func TestIncrementCORS(t *testing.T) {
	h, c := newHandler(t, Config{AutoCreate: true, CORSOrigins: []string{"https://app.example"}})
	pre := map[string]string{"Origin": "https://app.example", "Access-Control-Request-Method": "POST"}
	w := serve(h, http.MethodOptions, "/", "", pre)
	if w.Code != http.StatusNoContent || w.Header().Get("Access-Control-Allow-Origin") != "https://app.example" ||
		!strings.Contains(w.Header().Get("Access-Control-Allow-Methods"), "POST") {
		t.Errorf("preflight: %d %v", w.Code, w.Header())
	}
	w = serve(h, http.MethodPost, "/?counter="+emulatortest.ID(t), "", map[string]string{"Origin": "https://app.example"})
	if w.Code != http.StatusOK || w.Header().Get("Access-Control-Allow-Origin") != "https://app.example" {
		t.Errorf("POST from allowed origin: %d %v", w.Code, w.Header())
	}
	// A page of another origin: a bodiless POST and a form need no
	// preflight, so the browser sends them; they are refused, unwritten.
	other := emulatortest.ID(t)
	for _, r := range []struct{ target, ctype, body string }{
		{"/?counter=" + other, "", ""},
		{"/?counter=" + other + "&vote=false", "", ""},
		{"/", "text/plain", `{"counter":"` + other + `"}`},
	} {
		w = serve(h, http.MethodPost, r.target, r.body, map[string]string{"Origin": "https://other.example", "Content-Type": r.ctype})
		if w.Code != http.StatusForbidden || w.Header().Get("Access-Control-Allow-Origin") != "" || !strings.Contains(w.Body.String(), "nothing was written") {
			t.Errorf("POST %s from another origin: %d %v %s; want 403 with no CORS headers", r.target, w.Code, w.Header(), w.Body)
		}
	}
	if got := shards(t, c, other); len(got) != 0 {
		t.Errorf("requests of another origin's page wrote %v", got)
	}
	if w = serve(h, http.MethodPost, "/?counter="+other, "", nil); w.Code != http.StatusOK {
		t.Errorf("POST with no Origin (a server, a script): %d %s", w.Code, w.Body)
	}
}

// TestErrorsReadAsWritten: an error body shows <, > and & as they are, not
// escaped for HTML: people read these in curl.
func TestErrorsReadAsWritten(t *testing.T) {
	h, _ := newHandler(t, Config{AutoCreate: true})
	w := serve(h, http.MethodPost, "/", `{"counter":"a","<b>&":1}`, nil)
	if w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), `<b>&`) || strings.Contains(w.Body.String(), `\u003c`) {
		t.Errorf("answer %d %s; want 400 naming the key <b>& as it was written", w.Code, w.Body)
	}
}
