package increment

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/testkit/layouttest"
)

// TestStoppedMidWrite: an instance whose connections are dropped while
// its grouped writes are in flight (Firestore has applied them, and their
// answers are held) answers no one, and yet every increment it took is
// written once: a write goes on when its callers go away, so a client
// that got no answer must take the outcome as unknown (and send again
// with the same Idempotency-Key), never as not counted. No increment is
// answered 200 unless written.
func TestStoppedMidWrite(t *testing.T) {
	emulatortest.Require(t)
	p := emulatortest.NewProxy(t)
	c := emulatortest.ClientAt(t, p.Addr, emulatortest.Project)
	reader := emulatortest.Client(t)
	l := core.Default()
	srv := httptest.NewServer(New(c, Config{Layout: layouttest.Public(l), AutoCreate: true}))
	defer srv.Close()
	id := emulatortest.ID(t)
	post := func() (int, error) {
		resp, err := http.Post(srv.URL, "application/json", strings.NewReader(fmt.Sprintf(`{"counter":%q}`, id)))
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	if code, err := post(); code != http.StatusOK {
		t.Fatalf("first increment: %d %v", code, err)
	}
	p.Hold()
	const n = 20
	var wg sync.WaitGroup
	codes := make([]int, n)
	for i := range n {
		wg.Go(func() { codes[i], _ = post() })
	}
	for sum(shards(t, reader, id)) < 1+n { // applied, their answers held
		time.Sleep(10 * time.Millisecond)
	}
	srv.CloseClientConnections() // the instance goes away
	p.Release()
	wg.Wait()
	srv.Close() // every handler has returned
	ok := 0
	for _, code := range codes {
		switch code {
		case http.StatusOK:
			ok++
		case 0: // no answer
		default:
			t.Errorf("an increment was answered %d", code)
		}
	}
	if got := sum(shards(t, reader, id)); got != 1+n {
		t.Errorf("the shards hold %d; want %d: each increment taken, once", got, 1+n)
	}
	t.Logf("%d of %d answered 200 before the connections dropped; all %d written", ok, n, n)
}
