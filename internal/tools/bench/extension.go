package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/counter"
	"github.com/tallycounters/tally/increment"
	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/extension"
	"github.com/tallycounters/tally/internal/tools/bench/report"
	"github.com/tallycounters/tally/internal/tools/bridge"
	"github.com/tallycounters/tally/internal/tools/emulator"
	"github.com/tallycounters/tally/internal/tools/opcount"
	"github.com/tallycounters/tally/internal/trigger"
	"github.com/tallycounters/tally/layout"
	"github.com/tallycounters/tally/rollup"
)

// ExtensionModes are the extension bench's modes, in the order they run.
var ExtensionModes = []string{report.ModeTally, report.ModeExtension, report.ModeExtensionWorker}

// ExtensionOptions configure RunExtension: Workers clients on Documents
// documents (each client counts on one), at Rate over all of them.
type ExtensionOptions struct {
	Setup
	Documents int           // default 1
	Quiet     time.Duration // how long after a client's write its shard is held; default extension.DefaultQuiet
}

// The extension bench's collections: tally's own clients count on
// documents TALLY_COUNTS declares; the extension's on others, as an app
// that counts only with the extension has them.
const (
	collCounted   = "bench_counted"
	collExtension = "bench_ext"
)

// extCounters declares the extension's clients' counters of the bench.
const extCounters = collExtension + ":likes"

// extEnv is the running extension bench: an emulator, the bridge that
// carries its events to Rollup handlers of this process (each its own
// instance: its own state, its own client), an Increment, and what the
// modes measure with.
type extEnv struct {
	o       ExtensionOptions
	emu     *emulator.Emulator
	host    string
	bridge  *bridge.Bridge
	servers []*http.Server
	rollups []*meter
	incr    *meter
	incrURL string
	ops     struct{ load, rollup, worker opcount.Ops }
	load    *firestore.Client // the clients' writes (the extension's) and Increment's
	worker  *firestore.Client // the extension's workers' stand-in's
	admin   *firestore.Client // reads the bench makes, counted nowhere

	mu       sync.Mutex
	writes   map[string][]time.Time // each document's writes of tally's and of the workers', by commit time
	byWorker map[string]int         // of those, the workers'
}

// RunExtension measures the firestore-counter extension's clients
// counting through tally, beside tally's own clients on the same load.
func RunExtension(ctx context.Context, o ExtensionOptions) (*report.Extension, error) {
	o = extDefaults(o)
	e, err := startExtension(ctx, o)
	if err != nil {
		return nil, err
	}
	defer e.stop()
	rep := &report.Extension{Started: time.Now(), Options: report.ExtensionOptions{
		Clients: o.Workers, Documents: o.Documents, Rate: o.Rate, Seconds: o.Duration.Seconds(), Instances: o.Instances,
		WindowMS: ms(o.Spacing), DuplicateRate: o.DuplicateRate, DelayRate: o.DelayRate, Prices: o.Prices, Functions: o.Functions,
	}}
	for _, m := range o.Modes {
		r, err := e.runMode(ctx, m)
		if err != nil {
			return rep, fmt.Errorf("bench: mode %s: %w", m, err)
		}
		rep.Modes = append(rep.Modes, r)
	}
	return rep, nil
}

// extDefaults fills in o's defaults.
func extDefaults(o ExtensionOptions) ExtensionOptions {
	o.Documents = max(1, o.Documents)
	o.Workers = max(1, o.Workers)
	o.Instances = max(1, o.Instances)
	if len(o.Modes) == 0 {
		o.Modes = ExtensionModes
	}
	if o.Prices == (report.Prices{}) {
		o.Prices = report.StandardPrices
	}
	if o.Functions == (report.FunctionPrices{}) {
		o.Functions = report.CloudRunPrices
	}
	if o.Spacing <= 0 {
		o.Spacing = time.Second
	}
	if o.Settle <= 0 {
		o.Settle = DefaultSettle
	}
	if o.Quiet <= 0 {
		o.Quiet = extension.DefaultQuiet
	}
	return o
}

// startExtension starts the emulator, the bridge and the functions, and
// registers the triggers Rollup takes with TALLY_EXTENSION_COUNTERS.
func startExtension(ctx context.Context, o ExtensionOptions) (_ *extEnv, err error) {
	for _, m := range o.Modes {
		if !slices.Contains(ExtensionModes, m) {
			return nil, fmt.Errorf("bench: mode %q: the extension's modes are %v", m, ExtensionModes)
		}
	}
	e := &extEnv{o: o, writes: map[string][]time.Time{}, byWorker: map[string]int{}, incr: &meter{}}
	defer func() {
		if err != nil {
			e.stop()
		}
	}()
	var b [8]byte
	rand.Read(b[:])
	e.bridge = bridge.New(bridge.Options{Secret: hex.EncodeToString(b[:]), Logger: o.Logger,
		Faults: bridge.Faults{DuplicateRate: o.DuplicateRate, DelayRate: o.DelayRate, MaxDelay: o.MaxDelay}})
	bridgeAddr, err := e.serve(e.bridge)
	if err != nil {
		return nil, err
	}
	if e.emu, err = emulator.Start(ctx, emulator.Options{Paths: o.Emulator, FunctionsEmulator: bridgeAddr}); err != nil {
		return nil, err
	}
	e.host = e.emu.Host()
	lay, err := counter.LayoutFromEnv(func(k string) string {
		if k == layout.EnvCounts {
			return collCounted + ":likes"
		}
		return ""
	})
	if err != nil {
		return nil, err
	}
	ext, err := extension.ParseCounters(extCounters)
	if err != nil {
		return nil, err
	}
	for i, tr := range trigger.Of(core.MustParse(lay), ext) {
		key := bridge.TriggerKey(fmt.Sprintf("extension-%d", i), e.bridge.Secret())
		if err := emulator.RegisterTrigger(ctx, e.host, o.Project, key, emulator.Trigger{EventType: tr.Type, Pattern: tr.Pattern}); err != nil {
			return nil, err
		}
	}
	if err := e.functions(ctx, lay); err != nil {
		return nil, err
	}
	return e, nil
}

// functions starts the Rollup instances and Increment, and the clients
// the load and the workers' stand-in write with.
func (e *extEnv) functions(ctx context.Context, lay layout.Layout) error {
	ext, err := rollup.ParseExtensionCounters(extCounters)
	if err != nil {
		return err
	}
	var urls []string
	for range e.o.Instances {
		fs, err := opcount.Client(ctx, e.host, e.o.Project, &e.ops.rollup)
		if err != nil {
			return err
		}
		m := &meter{}
		h := rollup.New(fs, rollup.Config{Layout: lay, Project: e.o.Project, Spacing: e.o.Spacing, Logger: e.o.Logger,
			ExtensionCounters: ext, ExtensionQuiet: e.o.Quiet,
			OnFold: func(f rollup.FoldInfo) {
				if f.Wrote {
					e.wrote(f.Counter, f.Updated, false)
				}
			},
			OnMove: func(mv rollup.MoveInfo) { e.wrote(mv.Document, mv.Committed, false) },
		})
		addr, err := e.serve(m.wrap(h))
		if err != nil {
			return err
		}
		e.rollups = append(e.rollups, m)
		urls = append(urls, "http://"+addr+"/")
	}
	e.bridge.SetTargets(urls)

	if e.load, err = opcount.Client(ctx, e.host, e.o.Project, &e.ops.load); err != nil {
		return err
	}
	if e.worker, err = opcount.Client(ctx, e.host, e.o.Project, &e.ops.worker); err != nil {
		return err
	}
	if e.admin, err = opcount.Client(ctx, e.host, e.o.Project, &opcount.Ops{}); err != nil {
		return err
	}
	addr, err := e.serve(e.incr.wrap(increment.New(e.load, increment.Config{Layout: lay, Logger: e.o.Logger})))
	e.incrURL = "http://" + addr + "/"
	return err
}

// serve serves h on a free loopback port, until stop, and returns its
// address.
func (e *extEnv) serve(h http.Handler) (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	s := &http.Server{Handler: h}
	e.servers = append(e.servers, s)
	go s.Serve(l)
	return l.Addr().String(), nil
}

// wrote records a write of doc (a path from the root) committed at at,
// by the workers' stand-in if worker.
func (e *extEnv) wrote(doc string, at time.Time, worker bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.writes[doc] = append(e.writes[doc], at)
	if worker {
		e.byWorker[doc]++
	}
}

func (e *extEnv) stop() {
	for _, s := range e.servers {
		s.Close()
	}
	for _, c := range []*firestore.Client{e.load, e.worker, e.admin} {
		if c != nil {
			c.Close()
		}
	}
	if e.emu != nil {
		e.emu.Stop()
	}
}
