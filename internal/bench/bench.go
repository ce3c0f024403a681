// Package bench measures tally against the two baselines of the
// distributed-counter guides, side by side on one Firestore emulator: a
// single-document counter, and sharded counters with the per-event rollup
// (total += after - before). The trigger events come from the emulator itself.
package bench

import (
	"context"

	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"cloud.google.com/go/firestore"
	cloudevents "github.com/cloudevents/sdk-go/v2"
	"github.com/cloudevents/sdk-go/v2/event"

	"github.com/tallycounters/tally/increment"
	"github.com/tallycounters/tally/internal/bridge"
	"github.com/tallycounters/tally/internal/emulator"
	"github.com/tallycounters/tally/layout"
	"github.com/tallycounters/tally/rollup"
)

// The modes, in the order they run.
const (
	ModeRaw    = "raw"    // client writes to random shards: the ceiling
	ModeTally  = "tally"  // Increment + tally's Rollup
	ModeNaive  = "naive"  // Increment + the guides' per-event rollup
	ModeSingle = "single" // client writes to one document per counter
)

// AllModes lists every mode.
var AllModes = []string{ModeRaw, ModeTally, ModeNaive, ModeSingle}

// Collections keep the modes' data apart.
const (
	collTally  = layout.DefaultCollection
	collNaive  = "bench_naive"
	collRaw    = "bench_raw"
	collSingle = "bench_single"
)

// Options configures Run.
type Options struct {
	Counters      int
	Shards        int
	Workers       int
	Rate          float64 // increments per second over all counters; 0: unlimited
	Duration      time.Duration
	Window        time.Duration // tally's group-commit window
	Instances     int           // tally Rollup instances, each with its own batcher; deliveries alternate
	DuplicateRate float64       // share of shard events delivered twice
	DelayRate     float64       // share of shard events held back (reordered)
	MaxDelay      time.Duration
	Modes         []string
	Warmup        time.Duration // unmeasured raw load first, so that no mode runs on a cold emulator

	Project      string
	EmulatorHost string // an emulator already running, started with --functions_emulator at BridgePort
	BridgePort   int
	URL          string // an Increment to drive in tally mode instead of the in-process one
	Emulator     emulator.Paths

	Progress func(mode string, elapsed, total time.Duration, acked int64)
	Logger   *slog.Logger
}

// Report is every figure of one run.
type Report struct {
	Started time.Time    `json:"started"`
	Options OptionsJSON  `json:"options"`
	Modes   []ModeResult `json:"modes"`
}

// OptionsJSON is the part of Options a report records.
type OptionsJSON struct {
	Counters      int     `json:"counters"`
	Shards        int     `json:"shards"`
	Workers       int     `json:"workers"`
	Rate          float64 `json:"rate"`
	Seconds       float64 `json:"seconds"`
	WindowMS      float64 `json:"window_ms"`
	Instances     int     `json:"rollup_instances"`
	DuplicateRate float64 `json:"duplicate_rate"`
	DelayRate     float64 `json:"delay_rate"`
	MaxDelayMS    float64 `json:"max_delay_ms"`
	URL           string  `json:"url,omitempty"`
}

// env is the running bench: emulator, bridges, functions and clients.
type env struct {
	o        Options
	emu      *emulator.Emulator
	host     string
	servers  []*http.Server
	funcsURL string
	obs      *observer
	bridges  map[string]*bridge.Bridge
	clients  map[string]*firestore.Client
	ops      map[string]*Ops
	reader   *firestore.Client
}

// Run starts the environment, runs each mode in turn and reports.
func Run(ctx context.Context, o Options) (*Report, error) {
	if len(o.Modes) == 0 {
		o.Modes = AllModes
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	e, err := start(ctx, o)
	if err != nil {
		return nil, err
	}
	defer e.stop()
	rep := &Report{Started: time.Now(), Options: OptionsJSON{
		Counters: o.Counters, Shards: o.Shards, Workers: o.Workers, Rate: o.Rate, Seconds: o.Duration.Seconds(),
		WindowMS: ms(o.Window), Instances: max(1, o.Instances), DuplicateRate: o.DuplicateRate, DelayRate: o.DelayRate, MaxDelayMS: ms(o.MaxDelay), URL: o.URL,
	}}
	if o.Warmup > 0 {
		if o.Progress != nil {
			o.Progress("warmup", 0, o.Warmup, 0)
		}
		inc := e.incrementer(ModeRaw, collRaw, e.reader)
		drive(ctx, []string{fmt.Sprintf("warmup-%d", time.Now().UnixNano())}, o.Workers, o.Rate, o.Warmup, inc, nil)
	}
	var raw float64
	for _, m := range o.Modes {
		r, err := e.runMode(ctx, m)
		if err != nil {
			return rep, fmt.Errorf("bench: mode %s: %w", m, err)
		}
		if m == ModeRaw {
			raw = r.IncrPerSec
		}
		rep.Modes = append(rep.Modes, r)
	}
	for i := range rep.Modes {
		if raw > 0 {
			rep.Modes[i].RatioToRaw = rep.Modes[i].IncrPerSec / raw
		}
	}
	return rep, nil
}

func start(ctx context.Context, o Options) (_ *env, err error) {
	e := &env{o: o, obs: newObserver(layout.FieldTotal), bridges: map[string]*bridge.Bridge{},
		clients: map[string]*firestore.Client{}, ops: map[string]*Ops{}}
	defer func() {
		if err != nil {
			e.stop()
		}
	}()
	fl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	e.funcsURL = "http://" + fl.Addr().String()
	bl, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", o.BridgePort))
	if err != nil {
		return nil, fmt.Errorf("bridge port: %w", err)
	}
	faults := bridge.Faults{DuplicateRate: o.DuplicateRate, DelayRate: o.DelayRate, MaxDelay: o.MaxDelay}
	router := bridge.Router{}
	for _, m := range []string{ModeTally, ModeNaive} {
		e.bridges[m] = bridge.New(bridge.Options{Target: e.funcsURL + "/" + m + "/Rollup", Faults: faults,
			Logger: o.Logger, OnReceive: e.obs.delivered})
		router[m] = e.bridges[m]
	}
	router["observe-"+ModeTally] = e.obs
	e.serve(bl, router)

	e.host = o.EmulatorHost
	if e.host == "" {
		e.emu, err = emulator.Start(ctx, emulator.Options{Paths: o.Emulator, FunctionsEmulator: bl.Addr().String()})
		if err != nil {
			return nil, err
		}
		e.host = e.emu.Host()
	}
	triggers := map[string]string{
		ModeTally: collTally + "/{c}/shards/{s}", ModeNaive: collNaive + "/{c}/shards/{s}",
		"observe-" + ModeTally: collTally + "/{c}",
	}
	for key, pattern := range triggers {
		t := emulator.Trigger{EventType: "google.cloud.firestore.document.v1.written", Pattern: pattern}
		if err := emulator.RegisterTrigger(ctx, e.host, o.Project, key, t); err != nil {
			return nil, err
		}
	}
	for _, m := range append(AllModes, "reader") {
		c, ops, err := countingClient(ctx, e.host, o.Project)
		if err != nil {
			return nil, err
		}
		e.clients[m], e.ops[m] = c, ops
	}
	e.reader = e.clients["reader"]
	return e, e.serveFunctions(fl)
}

func (e *env) serve(l net.Listener, h http.Handler) {
	s := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	e.servers = append(e.servers, s)
	go s.Serve(l)
}

// serveFunctions serves each rollup mode's Increment and Rollup, built from
// tally's own packages, with the mode's counting client.
func (e *env) serveFunctions(l net.Listener) error {
	mux := http.NewServeMux()
	for _, m := range []string{ModeTally, ModeNaive} {
		lay := layout.Default()
		if m == ModeNaive {
			lay.Collection = collNaive
		}
		c := e.clients[m]
		mux.Handle("/"+m+"/Increment", increment.New(c, increment.Config{Layout: lay, AutoCreate: true, DefaultShards: e.o.Shards}))
		fns := []func(context.Context, event.Event) error{naiveRollup(c, lay, e.obs.added)}
		if m == ModeTally {
			fns = nil
			for range max(1, e.o.Instances) {
				fns = append(fns, rollup.New(c, rollup.Config{Layout: lay, Window: e.o.Window, Logger: e.o.Logger}).Handle)
			}
		}
		var hs []http.Handler
		for _, fn := range fns {
			p, err := cloudevents.NewHTTP()
			if err != nil {
				return err
			}
			h, err := cloudevents.NewHTTPReceiveHandler(context.Background(), p, fn)
			if err != nil {
				return err
			}
			hs = append(hs, h)
		}
		mux.Handle("/"+m+"/Rollup", roundRobin(hs))
	}
	e.serve(l, mux)
	return nil
}

// roundRobin spreads requests over hs, as the platform spreads events over
// instances.
func roundRobin(hs []http.Handler) http.Handler {
	var n atomic.Uint64
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hs[int(n.Add(1)%uint64(len(hs)))].ServeHTTP(w, r)
	})
}

func (e *env) stop() {
	for _, c := range e.clients {
		c.Close()
	}
	if e.emu != nil {
		e.emu.Stop()
	}
	for _, s := range e.servers {
		s.Close()
	}
}
