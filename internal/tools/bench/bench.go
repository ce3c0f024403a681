// Package bench measures tally against the two baselines of the
// distributed-counter guides, side by side on one Firestore emulator: the
// app's own increment of the counted field on its document (plain), and
// sharded counters with the per-event rollup (total += after - before).
// The trigger events come from the emulator itself, or, past what its
// serial delivery keeps up with, straight from the load generator's
// commits. Its reports, and their tables, JSON and
// charts, are package report's.
package bench

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/tools/bench/report"
	"github.com/tallycounters/tally/internal/tools/bridge"
	"github.com/tallycounters/tally/internal/tools/contention"
	"github.com/tallycounters/tally/internal/tools/emulator"
	"github.com/tallycounters/tally/internal/tools/opcount"
)

// AllModes lists every mode, in the order they run.
var AllModes = []string{report.ModeRaw, report.ModeTally, report.ModeNaive, report.ModePlain}

// Collections keep the modes' data apart.
const (
	collTally = core.DefaultCollection
	collNaive = "bench_naive"
	collRaw   = "bench_raw"
	collPlain = "bench_plain"
)

// settings is every runner's options in one, as the environment and the
// modes read them; each runner's own type (options.go) fills it.
type settings struct {
	// Setup's, and Options', AggregateOptions' and WindowsOptions' own,
	// as they say.
	Workers                             int
	Rate                                float64
	Duration, Window, MaxDelay          time.Duration
	Modes                               []string
	Instances, IncrementInstances       int
	ClientWrites, InDocument, Keys      bool
	IncrementBilling                    string
	IncrementCPU                        float64
	Delivery                            string
	DuplicateRate, DelayRate            float64
	ShardCacheTTL, Settle, Rest, Warmup time.Duration
	Project, EmulatorHost, LogPath, URL string
	BridgePort                          int
	Emulator                            emulator.Paths
	Prices                              report.Prices
	Functions                           report.FunctionPrices
	Progress                            func(Phase)
	Logger                              *slog.Logger
	InstanceCommand                     []string
	Counters, Fields, Shards            int
	Timed, Burst, Listeners, Feed       bool
	Contention                          float64
	Popularity                          string
	Aggregate                           bool // RunAggregate's
	Existing                            int
	Windows                             bool // RunWindows'
	Boundaries                          int
	Calendar                            // RunWindows': its buckets
}

// Phase is how one phase of a run goes: the warm-up, a mode's load, or the
// wait for its total to settle. Bound is the longest it may take.
type Phase struct {
	Name           string
	Elapsed, Bound time.Duration
	Detail         string
	Done           bool
}

// report passes a phase's progress to settings.Progress.
func (e *env) report(name string, elapsed, bound time.Duration, detail string, done bool) {
	if e.o.Progress != nil {
		e.o.Progress(Phase{Name: name, Elapsed: elapsed, Bound: bound, Detail: detail, Done: done})
	}
}

func settleBound(o settings) time.Duration {
	if o.Settle <= 0 {
		return DefaultSettle
	}
	return o.Settle
}

// env is the running bench: emulator, bridges, functions and clients.
type env struct {
	o         settings
	emu       *emulator.Emulator
	emuOpts   emulator.Options // how emu was started, to start it again on the same port
	emuUsed   bool             // a mode ran on emu
	emuHost   string           // the emulator itself, for its REST API
	host      string           // where the clients reach it: the emulator, or the contention stand-in before it
	proxy     *contention.Proxy
	servers   []*http.Server
	funcsURL  string
	obs       *observer
	bridges   map[string]*bridge.Bridge
	clients   map[string]*firestore.Client // each mode's, and "reader"
	ops       map[string]*opcount.Ops
	instances []*instance    // tally's Rollup instances
	incPool   *incrementPool // tally's Increment instances, when of less than one vCPU
	// inDocument counts the mode's increments answered as written into
	// their document itself.
	inDocument atomic.Int64
	meters     map[string]*meter // the in-process functions': each mode's Increment, and the naive Rollup
	spec       instanceSpec      // how they were started
	reader     *firestore.Client
	aggMu      sync.Mutex
	agg        *aggRun // the aggregate run in progress, which the per-event trigger records its writes in
}

// begin checks o and starts the environment a run measures in.
func begin(ctx context.Context, o settings) (*env, error) {
	o, err := checkOptions(o)
	if err != nil {
		return nil, err
	}
	return start(ctx, o)
}

// Run starts the environment, runs each mode in turn and reports.
func Run(ctx context.Context, opts Options) (*report.Load, error) {
	o := opts.all()
	if len(o.Modes) == 0 {
		o.Modes = AllModes
	}
	e, err := begin(ctx, o)
	if err != nil {
		return nil, err
	}
	defer e.stop()
	o = e.o // checked, its defaults filled in
	rep := &report.Load{Started: time.Now(), Options: optionsJSON(o)}
	if o.Warmup > 0 {
		e.warmup(ctx)
	}
	var raw float64
	for _, m := range o.Modes {
		r, err := e.runMode(ctx, m)
		if err != nil {
			return rep, fmt.Errorf("bench: mode %s: %w", m, err)
		}
		if m == report.ModeRaw {
			raw = r.IncrPerSec
		}
		rep.Modes = append(rep.Modes, r)
	}
	for i := range rep.Modes {
		if raw > 0 {
			rep.Modes[i].RatioToRaw = ptr(rep.Modes[i].IncrPerSec / raw)
		}
	}
	return rep, nil
}

// checkOptions checks o and fills in its defaults.
func checkOptions(o settings) (settings, error) {
	o.Instances = max(1, o.Instances)
	o.IncrementInstances = max(1, o.IncrementInstances)
	if o.Prices == (report.Prices{}) {
		o.Prices = report.StandardPrices
	}
	if o.Functions == (report.FunctionPrices{}) {
		o.Functions = report.CloudRunPrices
	}
	if f := o.Functions; f.Request < 0 || f.VCPUSecond < 0 || f.GiBSecond < 0 || f.PubSubTiB < 0 || f.InstanceVCPUSecond < 0 || f.InstanceGiBSecond < 0 {
		return o, fmt.Errorf("bench: prices must not be negative: %+v", f)
	}
	if o.Prices.Read < 0 || o.Prices.Write < 0 || o.Prices.Delete < 0 {
		return o, fmt.Errorf("bench: prices must not be negative: %+v", o.Prices)
	}
	if o.Popularity == "" {
		o.Popularity = PopularityUniform
	}
	if _, err := newPicker(o.Popularity, max(1, o.Counters), 1); err != nil {
		return o, err
	}
	if o.Fields < 0 || o.Fields > 100 {
		return o, fmt.Errorf("bench: --fields %d: want 0 (a counter per document) to 100 counts on each", o.Fields)
	}
	if o.Timed && o.Fields == 0 {
		return o, fmt.Errorf("bench: --timed keeps windows of counts on documents: give --fields")
	}
	if o.Counters < 1 || o.Workers < 1 {
		return o, fmt.Errorf("bench: want at least 1 counter and 1 client, not %d and %d", o.Counters, o.Workers)
	}
	if o.Shards < 0 || o.Shards > core.MaxShards || o.Contention < 0 {
		return o, fmt.Errorf("bench: --shards %d: want 0 (new counters, which grow) to %d; --contention %g: want 0 (off) or more", o.Shards, core.MaxShards, o.Contention)
	}
	switch o.IncrementBilling {
	case "":
		o.IncrementBilling = report.BillingRequest
	case report.BillingRequest, report.BillingInstance:
	default:
		return o, fmt.Errorf("bench: --increment-billing %q: want %s or %s", o.IncrementBilling, report.BillingRequest, report.BillingInstance)
	}
	if o.IncrementCPU == 0 {
		o.IncrementCPU = report.Instance.VCPU
	}
	if o.IncrementCPU < report.MinVCPU || o.IncrementCPU > 1 {
		return o, fmt.Errorf("bench: --increment-cpu %g: want %g to 1 (a vCPU), as Cloud Run allows", o.IncrementCPU, report.MinVCPU)
	}
	if o.IncrementCPU < 1 && (o.URL != "" || o.Delivery == report.DeliveryDirect) {
		return o, fmt.Errorf("bench: --increment-cpu %g needs the bench's own Increment and delivery through the emulator", o.IncrementCPU)
	}
	if o.IncrementCPU < 1 && o.IncrementBilling == report.BillingInstance {
		return o, fmt.Errorf("bench: --increment-cpu %g with --increment-billing instance: Cloud Run bills an instance of less than one vCPU by request only", o.IncrementCPU)
	}
	switch o.Delivery {
	case "":
		o.Delivery = report.DeliveryEmulator
	case report.DeliveryEmulator:
	case report.DeliveryDirect:
		if o.URL != "" {
			return o, fmt.Errorf("bench: direct delivery needs the in-process Increment, not --url")
		}
	default:
		return o, fmt.Errorf("bench: delivery %q: want %s or %s", o.Delivery, report.DeliveryEmulator, report.DeliveryDirect)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o, nil
}

// optionsJSON is the part of o a report records.
func optionsJSON(o settings) report.Options {
	return report.Options{
		Counters: o.Counters, Fields: o.Fields, Timed: o.Timed, Shards: o.Shards, Burst: o.Burst, Contention: o.Contention, Feed: o.Listeners && o.Feed,
		Workers: o.Workers, Rate: o.Rate, Seconds: o.Duration.Seconds(), SettleSeconds: settleBound(o).Seconds(),
		Popularity: o.Popularity, RestMS: ms(o.Rest), Listeners: o.Listeners,
		WindowMS: ms(o.Window), Instances: o.Instances, IncrementInstances: o.IncrementInstances, ClientWrites: o.ClientWrites, Keys: o.Keys, InDocument: o.InDocument, IncrementBilling: o.IncrementBilling, IncrementCPU: o.IncrementCPU, Delivery: o.Delivery, DuplicateRate: o.DuplicateRate, DelayRate: o.DelayRate, MaxDelayMS: ms(o.MaxDelay), URL: o.URL, Prices: o.Prices, FunctionPrices: o.Functions,
		Aggregate: o.Aggregate, Existing: o.Existing, Windows: o.Windows,
	}
}

func start(ctx context.Context, o settings) (_ *env, err error) {
	o.IncrementInstances = max(1, o.IncrementInstances) // the soak's and the other runners' settings say none: one
	if o.IncrementCPU == 0 {                            // as they say none: the deploy's
		o.IncrementCPU = report.Instance.VCPU
	}
	e := &env{o: o, obs: newObserver(), bridges: map[string]*bridge.Bridge{},
		clients: map[string]*firestore.Client{}, ops: map[string]*opcount.Ops{}}
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
	for _, m := range []string{report.ModeTally, report.ModeNaive, report.AggTrigger} {
		// As Eventarc, more than the instances take: each tally instance
		// holds at most MaxRequestsPerInstance at once, as Cloud Run does,
		// and answers 429 past that; the bridge then retries.
		e.bridges[m] = bridge.New(bridge.Options{Target: e.funcsURL + "/" + m + "/Rollup", Faults: faults,
			Logger: o.Logger, OnReceive: e.obs.delivered, MaxInFlight: 2 * report.MaxRequestsPerInstance * o.Instances})
		router[m] = e.bridges[m]
	}
	e.serve(bl, router)

	e.emuHost = o.EmulatorHost
	if e.emuHost == "" {
		e.emuOpts = emulator.Options{Paths: o.Emulator, FunctionsEmulator: bl.Addr().String()}
		e.emu, err = emulator.Start(ctx, e.emuOpts)
		if err != nil {
			return nil, err
		}
		e.emuHost = e.emu.Host()
	}
	e.host = e.emuHost
	if o.Contention > 0 {
		if e.proxy, err = contention.Start(contention.Options{Target: e.emuHost, Rate: o.Contention}); err != nil {
			return nil, err
		}
		e.host = e.proxy.Addr
	}
	if err := e.registerTriggers(ctx); err != nil {
		return nil, err
	}
	for _, m := range slices.Concat(AllModes, []string{report.AggTrigger, report.AggQuery, "reader"}) {
		e.ops[m] = &opcount.Ops{}
		if e.clients[m], err = opcount.Client(ctx, e.host, o.Project, e.ops[m]); err != nil {
			return nil, err
		}
	}
	if o.Delivery == report.DeliveryDirect {
		for _, m := range []string{report.ModeTally, report.ModeNaive} {
			e.ops[m].OnCommit = direct(o.Project, e.bridges[m])
		}
	}
	e.reader = e.clients["reader"]
	return e, e.serveFunctions(ctx, fl)
}

// warmup drives unmeasured load, through tally's Increment and Rollup when
// tally is to run, so that the emulator's writes, its trigger delivery and
// the rollup instances are all warm before the first mode, then waits until
// every event of it is answered.
func (e *env) warmup(ctx context.Context) {
	o := e.o
	id := fmt.Sprintf("warmup-%d", time.Now().UnixNano())
	inc := e.incrementer(report.ModeRaw, collRaw, e.reader)
	viaTally := slices.Contains(o.Modes, report.ModeTally) && o.URL == ""
	if viaTally {
		inc = e.incrementer(report.ModeTally, collTally, e.clients[report.ModeTally])
	}
	drive(ctx, []string{id}, load{workers: o.Workers, rate: o.Rate}, o.Warmup, inc, func(el time.Duration, n int64, done bool) {
		e.report("warmup", el, o.Warmup, fmt.Sprintf("%d increments, not measured", n), done)
	})
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if b := e.bridges[report.ModeTally]; b != nil && viaTally {
		// The emulator hands its events over one at a time, seconds
		// behind on a busy machine: a warmup fold that came after the
		// first mode had begun would be counted as that mode's. An event
		// is a shard write's, which may hold many increments.
		warmed, err := shardWrites(wctx, e.reader, collTally, []string{id})
		if err != nil {
			warmed = 0 // the wait below is only for a quiet start
		}
		for b.Stats().Received < warmed && wctx.Err() == nil {
			time.Sleep(20 * time.Millisecond)
		}
	}
	for _, b := range e.bridges {
		b.Wait(wctx)
	}
}

func (e *env) serve(l net.Listener, h http.Handler) {
	s := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	e.servers = append(e.servers, s)
	go s.Serve(l)
}

func (e *env) stop() {
	for _, c := range e.clients {
		c.Close()
	}
	for _, in := range e.instances {
		in.stop()
	}
	if e.incPool != nil {
		e.incPool.stop()
	}
	if e.proxy != nil {
		e.proxy.Close()
	}
	if e.emu != nil {
		e.emu.Stop()
	}
	for _, s := range e.servers {
		s.Close()
	}
}
