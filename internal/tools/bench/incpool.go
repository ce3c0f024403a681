package bench

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
	"time"

	"github.com/tallycounters/tally/internal/tools/cpucap"
)

// incrementSpec is what an Increment instance of less than one vCPU is
// started with, beside its instanceSpec's layout and window.
type incrementSpec struct {
	Shards     int           `json:"shards"`    // for a counter its first increment makes; 0: the default
	CacheTTL   time.Duration `json:"cache_ttl"` // 0: the default
	InDocument bool          `json:"in_document"`
}

// incrementPool is tally's Increment served as Cloud Run serves a function
// of less than one vCPU: by instances that each take one request at a
// time (Cloud Run allows no more below one vCPU), each a process of its
// own confined to that share of a CPU (cpucap). A request goes to an idle
// instance, the one idle longest, and waits for one when none is, as a
// request waits for an instance to start on Cloud Run.
type incrementPool struct {
	instances []*instance
	caps      []*cpucap.Cap
	proxies   map[*instance]*httputil.ReverseProxy
	idle      chan *instance
	stopOnce  sync.Once
	// throttledAt: throttled() when the mode began
	throttledAt time.Duration
}

// startIncrementPool starts n Increment instances of spec, each confined
// to share of a CPU.
func (e *env) startIncrementPool(ctx context.Context, spec instanceSpec, n int, share float64) (_ *incrementPool, err error) {
	p := &incrementPool{proxies: map[*instance]*httputil.ReverseProxy{}, idle: make(chan *instance, n)}
	defer func() {
		if err != nil {
			p.stop()
		}
	}()
	for range n {
		in, err := e.startInstance(ctx, spec)
		if err != nil {
			return nil, err
		}
		p.instances = append(p.instances, in)
		c, err := cpucap.Confine(in.cmd.Process.Pid, share)
		if err != nil {
			return nil, fmt.Errorf("bench: --increment-cpu %g: %w", share, err)
		}
		p.caps = append(p.caps, c)
		u, err := url.Parse(in.url)
		if err != nil {
			return nil, err
		}
		p.proxies[in] = &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(u)
			r.Out.URL.Path = "/Increment"
		}}
		p.idle <- in
	}
	return p, nil
}

// ServeHTTP hands the request to an idle instance.
func (p *incrementPool) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var in *instance
	select {
	case in = <-p.idle:
	case <-r.Context().Done():
		http.Error(w, "no Increment instance became idle", http.StatusServiceUnavailable)
		return
	}
	defer func() { p.idle <- in }()
	p.proxies[in].ServeHTTP(w, r)
}

// stats asks every instance what it did since its last reset.
func (p *incrementPool) stats() ([]InstanceStats, error) { return statsOf(p.instances) }

// reset zeroes every instance's counts.
func (p *incrementPool) reset() error {
	var errs []error
	for _, in := range p.instances {
		errs = append(errs, in.reset())
	}
	return errors.Join(errs...)
}

// throttled is how long the CPU controller held the instances back for
// their share, in all; ok false where the cgroups do not tell.
func (p *incrementPool) throttled() (time.Duration, bool) {
	var all time.Duration
	for _, c := range p.caps {
		held, ok := c.Throttled()
		if !ok {
			return 0, false
		}
		all += held
	}
	return all, true
}

// stop ends the instances and removes their cgroups.
func (p *incrementPool) stop() {
	p.stopOnce.Do(func() {
		for _, in := range p.instances {
			in.stop()
		}
		for _, c := range p.caps {
			c.Remove()
		}
	})
}

// oneAtATime serves one request at a time, as an instance of less than
// one vCPU does, and answers 429 to a request that comes while it holds
// one (the pool sends none such).
func oneAtATime(h http.Handler) http.Handler {
	busy := make(chan struct{}, 1)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case busy <- struct{}{}:
			defer func() { <-busy }()
			h.ServeHTTP(w, r)
		default:
			http.Error(w, "this instance takes one request at a time", http.StatusTooManyRequests)
		}
	})
}
