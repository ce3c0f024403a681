package web_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/tallycounters/tally/internal/extension"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/tools/stack"
	"github.com/tallycounters/tally/setup"
)

// TestExtensionClientsWithSlowAnswers: 20 clients that listen as the
// extension's web client does (the document, their shard and partials on
// listeners of their own, summed as each changes, with their writes not
// yet answered applied on top) press a post's like 5 times each, 400 ms
// apart, through a network that answers each of their writes 3 s late,
// as a phone's may. While tally moves their shards into the post, no
// client ever shows more likes than were sent: a move takes no shard its
// client wrote within the quiet time (10 s), so no write of it is still
// unanswered. Every client ends showing all 100.
func TestExtensionClientsWithSlowAnswers(t *testing.T) {
	t.Parallel()
	node := needNode(t)
	s := startWith(t, stack.Options{}, setup.EnvExtension, "posts:likes", setup.EnvCounts, "posts:likes")
	quiet := s.Config().ExtensionQuiet
	fs := emulatortest.ClientAt(t, s.EmulatorHost, stack.DefaultProject)
	ctx := context.Background()
	post := "posts/" + emulatortest.ID(t)
	if _, err := fs.Doc(post).Create(ctx, map[string]any{"title": "hello", "likes": int64(0)}); err != nil {
		t.Fatal(err)
	}
	out := runE2E(t, node, "extension-solo.mjs", "EXTENSION_SOLO", map[string]any{"project": stack.DefaultProject,
		"firestore": slowAcks(t, s.EmulatorHost, 3*time.Second), "doc": post, "field": "likes", "clients": 20, "each": 5, "gap": 400})
	var saw struct {
		Views     []int64
		Above     int64
		Snapshots int
		SlowestMS int64
	}
	if err := json.Unmarshal(out, &saw); err != nil {
		t.Fatalf("the clients said %q: %v", out, err)
	}
	for i, v := range saw.Views {
		if v != 100 {
			t.Errorf("client %d's last view: %d; want 100", i, v)
		}
	}
	// The quiet time is the promise's bound: a write answered later than
	// it after it was applied may show twice (on a machine too busy to
	// answer in 10 s, which is then said).
	slowest := time.Duration(saw.SlowestMS) * time.Millisecond
	switch {
	case slowest < quiet && saw.Above != 0:
		t.Errorf("a client showed %d likes more than were sent, its writes all answered within %v", saw.Above, slowest)
	case slowest >= quiet:
		t.Logf("a write waited %v for its answer, past the quiet time, %v: a view above the truth may show then", slowest, quiet)
	}
	t.Logf("%d views; the most a view was above the likes sent: %d; the slowest answer: %v", saw.Snapshots, saw.Above, slowest)
	if left, err := fs.Doc(post).Collection(extension.Collection).DocumentRefs(ctx).GetAll(); err != nil || len(left) != 0 {
		t.Errorf("%d shards left (%v); want none", len(left), err)
	}
}

// slowAcks is a proxy to the emulator at target, on loopback, speaking
// unencrypted HTTP/2 as the emulator does, that answers each response of
// the Write method (a write's acknowledgement) late by d, and passes every
// other call, a listener's too, as it comes. It answers its address.
func slowAcks(t *testing.T, target string, d time.Duration) string {
	t.Helper()
	var h2 http.Protocols
	h2.SetUnencryptedHTTP2(true)
	rp := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: "http", Host: target})
	rp.Transport = &http.Transport{Protocols: &h2}
	rp.FlushInterval = -1
	rp.ModifyResponse = func(r *http.Response) error {
		if strings.HasSuffix(r.Request.URL.Path, "/Write") {
			r.Body = lateBody(r.Body, d)
		}
		return nil
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: rp, Protocols: &h2}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return l.Addr().String()
}

// late is a response body whose every part is read d after it came,
// each on its own: a part that came while another waited is not held up
// by it.
type late struct {
	io.Closer
	parts chan part
	d     time.Duration
	rest  []byte
	err   error
}

type part struct {
	b    []byte
	came time.Time
	err  error
}

func lateBody(body io.ReadCloser, d time.Duration) *late {
	l := &late{Closer: body, parts: make(chan part, 1024), d: d}
	go func() {
		for {
			b := make([]byte, 32<<10)
			n, err := body.Read(b)
			l.parts <- part{b: b[:n], came: time.Now(), err: err}
			if err != nil {
				close(l.parts)
				return
			}
		}
	}()
	return l
}

func (l *late) Read(p []byte) (int, error) {
	for len(l.rest) == 0 {
		if l.err != nil {
			return 0, l.err
		}
		pt, ok := <-l.parts
		if !ok {
			return 0, io.EOF
		}
		time.Sleep(time.Until(pt.came.Add(l.d)))
		l.rest, l.err = pt.b, pt.err
	}
	n := copy(p, l.rest)
	l.rest = l.rest[n:]
	return n, nil
}
