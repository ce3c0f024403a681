package bench

import (
	"context"
	"math/rand/v2"
	"net"
	"net/http"
	"sync/atomic"

	"cloud.google.com/go/firestore"
	"github.com/cloudevents/sdk-go/v2/event"
	cehttp "github.com/cloudevents/sdk-go/v2/protocol/http"

	"github.com/tallycounters/tally/increment"
	"github.com/tallycounters/tally/internal/opcount"
	"github.com/tallycounters/tally/layout"
	"github.com/tallycounters/tally/rollup"
)

// MaxRequestsPerInstance is Cloud Run's highest concurrency: an instance
// holding this many requests answers 429, and the platform retries.
const MaxRequestsPerInstance = 1000

// instance is one of tally's Rollup instances: its own handler, its own
// Firestore client, and what it was asked to do.
type instance struct {
	client   *firestore.Client
	handler  http.Handler
	requests atomic.Int64 // Rollup requests taken
	refused  atomic.Int64 // answered 429, holding too many
	inflight atomic.Int64 // held now
	most     atomic.Int64 // held at once, at most
}

func (in *instance) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := in.inflight.Add(1)
	defer in.inflight.Add(-1)
	if n > MaxRequestsPerInstance {
		in.refused.Add(1)
		http.Error(w, "too many requests", http.StatusTooManyRequests)
		return
	}
	in.requests.Add(1)
	for m := in.most.Load(); n > m && !in.most.CompareAndSwap(m, n); m = in.most.Load() {
	}
	in.handler.ServeHTTP(w, r)
}

// reset zeroes the instance's counts for the next mode.
func (in *instance) reset() {
	in.requests.Store(0)
	in.refused.Store(0)
	in.most.Store(in.inflight.Load())
}

// serveFunctions serves each rollup mode's Increment and Rollup, built from
// tally's own packages: the per-event rollup on the mode's client, and tally
// on o.Instances instances, each event to a random one, as the platform
// spreads events over instances.
func (e *env) serveFunctions(ctx context.Context, l net.Listener) error {
	mux := http.NewServeMux()
	for _, m := range []string{ModeTally, ModeNaive} {
		lay := layout.Default()
		if m == ModeNaive {
			lay.Collection = collNaive
		}
		c := e.clients[m]
		mux.Handle("/"+m+"/Increment", increment.New(c, increment.Config{Layout: lay, AutoCreate: true, DefaultShards: e.o.Shards}))
		if m == ModeNaive {
			mux.Handle("/"+m+"/Rollup", cloudEventHandler(naiveRollup(c, lay, e.obs.added)))
			continue
		}
		for range e.o.Instances {
			ic, err := opcount.Client(ctx, e.host, e.o.Project, e.ops[m])
			if err != nil {
				return err
			}
			h := rollup.New(ic, rollup.Config{Layout: lay, Project: e.o.Project, Window: e.o.Window, Logger: e.o.Logger})
			e.instances = append(e.instances, &instance{client: ic, handler: h})
		}
		mux.Handle("/"+m+"/Rollup", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			e.instances[rand.IntN(len(e.instances))].ServeHTTP(w, r)
		}))
	}
	e.serve(l, mux)
	return nil
}

// cloudEventHandler serves fn over HTTP, reading each request as a
// CloudEvent, as tally's Rollup does.
func cloudEventHandler(fn func(context.Context, event.Event) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e, err := cehttp.NewEventFromHTTPRequest(r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if err := fn(r.Context(), *e); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
}
