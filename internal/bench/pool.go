package bench

import (
	"context"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tallycounters/tally"
)

// pool is a set of Rollup instances, each a whole tally.Functions with its
// own Firestore client, served on its own port, that the soak kills and
// starts again. As Cloud Run does, it spreads events over the live ones.
type pool struct {
	cfg  tally.Config
	logs io.Writer
	mu   sync.Mutex
	live []*poolInstance // nil where an instance is down
}

type poolInstance struct {
	fns      *tally.Functions
	srv      *http.Server
	proxy    *httputil.ReverseProxy
	inflight atomic.Int64
}

// discardLog keeps the proxy quiet about the connections a kill cuts.
var discardLog = log.New(io.Discard, "", 0)

func newPool(cfg tally.Config, logs io.Writer, n int) *pool {
	return &pool{cfg: cfg, logs: logs, live: make([]*poolInstance, n)}
}

// start brings instance i up, on a fresh client and a fresh port.
func (p *pool) start(ctx context.Context, i int) error {
	fns, err := tally.NewFunctions(ctx, p.cfg, p.logs)
	if err != nil {
		return err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fns.Close()
		return err
	}
	in := &poolInstance{fns: fns}
	in.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		in.inflight.Add(1)
		defer in.inflight.Add(-1)
		fns.Rollup.ServeHTTP(w, r)
	})}
	go in.srv.Serve(l)
	target := &url.URL{Scheme: "http", Host: l.Addr().String()}
	in.proxy = &httputil.ReverseProxy{
		Rewrite:   func(pr *httputil.ProxyRequest) { pr.SetURL(target) },
		Transport: &http.Transport{MaxIdleConnsPerHost: MaxRequestsPerInstance},
		ErrorLog:  discardLog,
	}
	p.mu.Lock()
	p.live[i] = in
	p.mu.Unlock()
	return nil
}

// holding waits, at most for d, until instance i holds an event.
func (p *pool) holding(i int, d time.Duration) {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		p.mu.Lock()
		in := p.live[i]
		p.mu.Unlock()
		if in == nil || in.inflight.Load() > 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// kill stops instance i at once, as a crash would: its connections are
// cut, so every event it held fails and is delivered again. It returns how
// many it held.
func (p *pool) kill(i int) int64 {
	p.mu.Lock()
	in := p.live[i]
	p.live[i] = nil
	p.mu.Unlock()
	if in == nil {
		return 0
	}
	held := in.inflight.Load()
	in.srv.Close()
	in.fns.Close()
	return held
}

// stop kills every instance.
func (p *pool) stop() {
	for i := range p.live {
		p.kill(i)
	}
}

// ServeHTTP passes an event to a random live instance, or answers 503.
func (p *pool) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	var up []*poolInstance
	for _, in := range p.live {
		if in != nil {
			up = append(up, in)
		}
	}
	p.mu.Unlock()
	if len(up) == 0 {
		http.Error(w, "no Rollup instance is up", http.StatusServiceUnavailable)
		return
	}
	up[rand.IntN(len(up))].proxy.ServeHTTP(w, r)
}
