// Package stack runs tally on one machine: the Firestore emulator with
// tally's security rules, the functions on an HTTP server of their own, and
// the bridge that carries the emulator's trigger events to Rollup. It
// starts with every total brought up to date, and stops in order: new
// increments refused, events in flight answered, totals folded, data saved.
package stack

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tallycounters/tally/counter"
	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/extension"
	"github.com/tallycounters/tally/internal/httpjson"
	"github.com/tallycounters/tally/internal/tools/authemu"
	"github.com/tallycounters/tally/internal/tools/bridge"
	"github.com/tallycounters/tally/internal/tools/contention"
	"github.com/tallycounters/tally/internal/tools/emulator"
	"github.com/tallycounters/tally/internal/tools/pubsubemu"
	"github.com/tallycounters/tally/internal/trigger"
	"github.com/tallycounters/tally/rollup"
	"github.com/tallycounters/tally/setup"
)

// TriggerKey names the Rollup trigger registered with the emulator; those
// of further counted collections are TriggerKey-1, TriggerKey-2, ...;
// each with the bridge's secret after it (bridge.TriggerKey), which the
// emulator puts in the path of its events.
const TriggerKey = "tally-rollup"

// DefaultProject is the project of a local run: "demo-" ids never reach a
// real project.
const DefaultProject = "demo-tally"

// Options configures Start.
type Options struct {
	Config         setup.Config  // the functions' configuration; Project defaults to DefaultProject
	Host           string        // address to serve on; default 127.0.0.1
	Port           int           // functions port; 0 picks a free one
	EmulatorPort   int           // 0 picks a free one
	BridgePort     int           // 0 picks a free one
	DataDir        string        // import on start, export on Stop
	SaveTimeout    time.Duration // bounds the save of DataDir on Stop: the wait for an emulator that does not answer, and the export; default ExportTimeout
	ExternalHost   string        // use this running emulator instead of starting one
	Emulator       emulator.Paths
	EmulatorOutput io.Writer
	Logs           io.Writer      // the functions' JSON log lines; nil discards
	Logger         *slog.Logger   // the stack's own; nil discards
	Bridge         bridge.Options // Target is filled in
	Timeout        time.Duration  // bounds each Firestore call the stack makes itself; default DefaultTimeout
	// AuthHost is a running Firebase Auth emulator, for sign-in. With
	// Config.Auth firebase and no AuthHost, Start starts one.
	AuthHost string
	// AuthPort is the port of the Auth emulator Start starts (0: a free one).
	AuthPort int
	// RollupURL, if set, is where the bridge delivers events instead of the
	// stack's own /Rollup: Rollup instances run apart from the stack.
	RollupURL string
	// Contention, if not 0, puts the contention stand-in between the
	// functions and the emulator: past this many writes a second to one
	// document, their writes wait, then fail ABORTED, as on Firestore.
	Contention float64
	// Fanout is how the jobs run their parts: setup.FanoutPubSub, through
	// the Pub/Sub emulator (started, unless PubSubHost names one), or
	// setup.FanoutInProcess; "" for Pub/Sub when windows are declared, in
	// process when not.
	Fanout     string
	PubSubHost string
	// AppDir, if set, is a directory of a web app's files, served at / on
	// the functions' port (the functions keep their paths): the app and
	// Increment share an origin.
	AppDir string
	// AppRules, if set, is the app's own rules file (its firestore.rules),
	// which the emulator enforces with tally's merged in, as 'tally rules
	// --merge' prints them, and again each time the file changes.
	AppRules string
	// ManualJobs: the stack neither folds every counter as it starts and
	// stops (settle) nor runs the boundary job at each start of a bucket:
	// the jobs run only when asked (StartJob), as a bench of them wants.
	ManualJobs bool
}

// layout is the configuration's Layout, as tally's packages take it.
func (o Options) layout() core.Layout { return core.MustParse(o.Config.Layout) }

// extension is the configuration's firestore-counter extension's
// counters, as tally's packages take them.
func (o Options) extension() extension.Counters {
	ext, _ := extension.ParseCounters(o.Config.ExtensionCounters.String())
	return ext
}

// Stack is a running local tally.
type Stack struct {
	EmulatorHost string // FIRESTORE_EMULATOR_HOST
	FunctionsURL string // e.g. http://127.0.0.1:8080; functions at /Increment, /Rollup, /Reconcile
	BridgeAddr   string // the --functions_emulator address
	Emulator     *emulator.Emulator
	Bridge       *bridge.Bridge
	Functions    *setup.Set
	Rules        string // the rules file the emulator enforces; "" for an external emulator
	Settled      int    // counters whose totals Start brought up to date
	// Unsettled are the counters Start could not fold, each with why: it
	// starts all the same, and their events or a reconcile fold them.
	Unsettled []Unsettled
	Saved     bool // Stop exported the data to Options.DataDir
	// Unanswered is how many events Stop left unanswered, though every
	// counter was folded after them, so that the totals hold their writes.
	Unanswered int64
	AuthHost   string // FIREBASE_AUTH_EMULATOR_HOST; "" without sign-in
	Auth       *authemu.Emulator
	Contention *contention.Proxy // the functions reach the emulator through it, if set
	Origins    []string          // the stack's own, whose pages may call the functions
	Fanout     string            // how the jobs run their parts: setup.FanoutPubSub or setup.FanoutInProcess
	PubSubHost string            // PUBSUB_EMULATOR_HOST, with Pub/Sub
	PubSub     *pubsubemu.Emulator

	o        Options
	admin    *counter.Client
	servers  []*http.Server
	closers  []io.Closer // what the stack opened for its servers: the app's directory
	draining atomic.Bool
	seeded   atomic.Bool   // the demo's feed has posts
	watching chan struct{} // closed to stop watching an external emulator
	watched  chan struct{} // closed when the watch has stopped
	reading  chan struct{} // closed to stop reading the app's rules as they change
	read     chan struct{} // closed when it has stopped
	moving   chan struct{} // closed to stop the boundary job
	moved    chan struct{} // closed when it has stopped
}

// Timeouts of the local servers: a client must send its headers within
// readHeaderTimeout and its body within readTimeout, and an idle
// keep-alive connection is closed after idleTimeout.
const (
	readHeaderTimeout = 5 * time.Second
	readTimeout       = 15 * time.Second
	idleTimeout       = 60 * time.Second
	maxHeaderBytes    = 64 << 10
)

// DefaultTimeout bounds each Firestore call of the local stack's: a call
// to the emulator on this machine answers in milliseconds when idle, and
// a cold emulator on a loaded machine has taken over 10 s for its first;
// the bound is for a machine many times slower, or a hang.
const DefaultTimeout = time.Minute

// Start brings the stack up. It sets FIRESTORE_EMULATOR_HOST for this
// process, as the Firestore client reads it.
func Start(ctx context.Context, o Options) (_ *Stack, err error) {
	s := &Stack{o: o.withDefaults()}
	defer func() {
		if err != nil {
			s.shutdown()
		}
	}()
	fl, err := s.listen()
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			fl.Close() // not served yet: shutdown does not know it
		}
	}()
	if err := s.startServices(ctx); err != nil {
		return nil, err
	}
	if err := s.serveFunctions(fl); err != nil {
		return nil, err
	}
	if err := s.startJobs(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// withDefaults is o with its defaults in place of what it leaves unset.
func (o Options) withDefaults() Options {
	if o.Config.Project == "" {
		o.Config.Project = DefaultProject
	}
	if o.Host == "" {
		o.Host = "127.0.0.1"
	}
	if o.Logs == nil {
		o.Logs = io.Discard
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	return o
}

// listen takes the functions' port, which it returns, not yet served,
// and the bridge's, which it serves.
func (s *Stack) listen() (net.Listener, error) {
	o := s.o
	fl, err := net.Listen("tcp", net.JoinHostPort(o.Host, fmt.Sprint(o.Port)))
	if err != nil {
		return nil, fmt.Errorf("stack: functions port: %w", err)
	}
	s.FunctionsURL = "http://" + fl.Addr().String()
	// Pages served here (the demo) call the functions; pages of other
	// origins may not, unless TALLY_CORS_ORIGINS names them.
	s.Origins = ownOrigins(fl.Addr().(*net.TCPAddr))
	s.o.Config.CORSOrigins = withTwins(append(slices.Clone(o.Config.CORSOrigins), s.Origins...))
	bl, err := net.Listen("tcp", net.JoinHostPort(o.Host, fmt.Sprint(o.BridgePort)))
	if err != nil {
		fl.Close()
		return nil, fmt.Errorf("stack: bridge port: %w", err)
	}
	s.BridgeAddr = bl.Addr().String()
	bo := o.Bridge
	bo.Target = s.FunctionsURL + "/Rollup"
	if o.RollupURL != "" {
		bo.Target = o.RollupURL
	}
	if bo.Logger == nil {
		bo.Logger = o.Logger
	}
	bo.MaxEventBytes = rollup.MaxEventBytes // what Rollup takes, as Eventarc delivers it
	if bo.Secret == "" {
		bo.Secret = rand.Text()
	}
	s.Bridge = bridge.New(bo)
	s.serve(bl, s.Bridge)
	return fl, nil
}

// startServices starts the emulators, the stand-in for contention if
// asked, and the functions, with what they need declared, registered and
// subscribed.
func (s *Stack) startServices(ctx context.Context) (err error) {
	o := s.o
	if err := s.startEmulator(ctx); err != nil {
		return err
	}
	if err := s.startAuth(ctx); err != nil {
		return err
	}
	if err := s.startPubSub(ctx); err != nil {
		return err
	}
	if o.Contention > 0 {
		if s.Contention, err = contention.Start(contention.Options{Target: s.EmulatorHost, Rate: o.Contention}); err != nil {
			return err
		}
	}
	if s.Functions, err = s.newFunctions(ctx); err != nil {
		return err
	}
	if err := s.Functions.Declare(ctx, "tally serve"); err != nil {
		return err
	}
	s.admin = counter.New(s.Functions.Client, counter.Options{
		Layout: o.Config.Layout, ShardCacheTTL: o.Config.CacheTTL, Spacing: o.Config.Spacing, Timeout: o.Timeout,
	})
	if err := s.register(ctx); err != nil {
		return err
	}
	return s.subscribe(ctx)
}

// serveFunctions serves, on fl, the functions, the app's pages (or the
// demo's) and the local configuration.
func (s *Stack) serveFunctions(fl net.Listener) error {
	app, closeApp, err := withApp(s.o.AppDir, s.Functions.Handler())
	if err != nil {
		return err
	}
	s.closers = append(s.closers, closeApp)
	mux := http.NewServeMux()
	mux.Handle("/", app)
	if s.o.AppDir == "" {
		mux.Handle("GET /{$}", http.RedirectHandler("/demo", http.StatusFound)) // the page serve has
	}
	mux.HandleFunc("/demo", s.demo)
	mux.HandleFunc("/demo.js", demoJS)
	mux.HandleFunc(LocalConfigPath, s.localConfig)
	s.serve(fl, s.gate(mux))
	return nil
}

// startJobs settles what the counts need at the start, unless the jobs
// are run by hand, and starts what runs beside the stack: the watch of an
// external emulator, the reload of the app's rules, and the windows'
// boundary job.
func (s *Stack) startJobs(ctx context.Context) (err error) {
	o := s.o
	if !o.ManualJobs {
		if s.Settled, s.Unsettled, err = s.settle(ctx); err != nil {
			return err
		}
	}
	if o.ExternalHost != "" {
		s.watching, s.watched = make(chan struct{}), make(chan struct{})
		go s.watch()
	}
	if o.AppRules != "" && s.Emulator != nil {
		s.reading, s.read = make(chan struct{}), make(chan struct{})
		go s.reloadRules()
	}
	if unit := o.layout().SmallestUnit(); unit != "" && !o.ManualJobs {
		s.moving, s.moved = make(chan struct{}), make(chan struct{})
		go s.moveWindows(unit, s.moving, s.moved)
	}
	return nil
}

// withTwins is origins with, for each of a page on this machine, its
// twin: http://localhost:5173 for http://127.0.0.1:5173, and the other
// way. A dev server prints one (Vite prints localhost) and a browser may
// be pointed at either; locally they are one page. serve's only: a
// deployed Increment takes the origins it is given, exactly.
func withTwins(origins []string) []string {
	out := slices.Clone(origins)
	for _, o := range origins {
		for a, b := range map[string]string{"://127.0.0.1:": "://localhost:", "://localhost:": "://127.0.0.1:"} {
			if twin := strings.Replace(o, a, b, 1); twin != o && !slices.Contains(out, twin) {
				out = append(out, twin)
			}
		}
	}
	return out
}

// ownOrigins are the origins of pages the functions' server serves: its
// address, and localhost for a loopback one.
func ownOrigins(a *net.TCPAddr) []string {
	out := []string{"http://" + a.String()}
	if a.IP.IsLoopback() {
		out = append(out, fmt.Sprintf("http://localhost:%d", a.Port))
	}
	return out
}

// startEmulator starts the emulator with tally's rules and the data kept in
// DataDir, or takes the external one.
func (s *Stack) startEmulator(ctx context.Context) error {
	o := s.o
	if o.ExternalHost != "" {
		s.EmulatorHost = o.ExternalHost
		return nil
	}
	src, err := s.rulesSource()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "tally-rules-")
	if err != nil {
		return fmt.Errorf("stack: rules: %w", err)
	}
	s.Rules = filepath.Join(dir, "firestore.rules")
	if err := os.WriteFile(s.Rules, []byte(src), 0o644); err != nil {
		return fmt.Errorf("stack: rules: %w", err)
	}
	eo := emulator.Options{Paths: o.Emulator, Host: o.Host, Port: o.EmulatorPort,
		FunctionsEmulator: s.BridgeAddr, Output: o.EmulatorOutput, Rules: s.Rules}
	if o.DataDir != "" {
		eo.ImportData = emulator.LatestExport(o.DataDir)
	}
	if s.Emulator, err = emulator.Start(ctx, eo); err != nil {
		return err
	}
	s.EmulatorHost = s.Emulator.Host()
	return nil
}

// startAuth takes the Auth emulator given, or starts one when the
// functions verify ID tokens and none was given.
func (s *Stack) startAuth(ctx context.Context) error {
	s.AuthHost = s.o.AuthHost
	if s.AuthHost == "" && s.o.Config.Auth == setup.AuthFirebase {
		var err error
		if s.Auth, err = authemu.StartOn(ctx, s.o.Config.Project, s.o.AuthPort, s.o.EmulatorOutput); err != nil {
			return err
		}
		s.AuthHost = s.Auth.Host
	}
	return nil
}

// envMu is held while a stack makes its functions: the Firestore client and
// the Firebase Admin SDK find the emulators in FIRESTORE_EMULATOR_HOST and
// FIREBASE_AUTH_EMULATOR_HOST when they are made, so stacks started at once
// in one process take turns setting them.
var envMu sync.Mutex

// newFunctions points this process at the stack's emulators and makes the
// functions. The variables stay set, for what the process runs next.
func (s *Stack) newFunctions(ctx context.Context) (*setup.Set, error) {
	envMu.Lock()
	defer envMu.Unlock()
	host := s.EmulatorHost
	if s.Contention != nil {
		host = s.Contention.Addr
	}
	os.Setenv("FIRESTORE_EMULATOR_HOST", host)
	if s.AuthHost != "" {
		os.Setenv(authemu.EnvHost, s.AuthHost)
	}
	if s.PubSubHost != "" {
		os.Setenv(pubsubemu.EnvHost, s.PubSubHost)
	}
	return setup.New(ctx, s.o.Config, s.o.Logs)
}

// register has the emulator deliver to the bridge every write to a shard
// or an aggregated child, and every creation of a counted document: the
// triggers deploy.sh sets up in the cloud. It is part of the emulator's
// start, bounded as that is: it ends as soon as the emulator answers.
func (s *Stack) register(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, emulator.DefaultStartTimeout)
	defer cancel()
	for i, tr := range trigger.Of(s.o.layout(), s.o.extension()) {
		t := emulator.Trigger{EventType: tr.Type, Database: s.o.Config.Database, Pattern: tr.Pattern}
		key := TriggerKey
		if i > 0 {
			key = fmt.Sprintf("%s-%d", TriggerKey, i)
		}
		key = bridge.TriggerKey(key, s.Bridge.Secret())
		if err := emulator.RegisterTrigger(ctx, s.EmulatorHost, s.o.Config.Project, key, t); err != nil {
			return err
		}
	}
	return nil
}

// Unsettled is a counter the stack could not fold, and why.
type Unsettled struct {
	Counter string
	Err     error
}

// settle folds every counter, so that each total is its shards' sum however
// the last run ended, and says how many it folded and which it could not,
// and why: one that cannot be folded stops nothing. It fails only if the
// counters cannot be listed.
func (s *Stack) settle(ctx context.Context) (int, []Unsettled, error) {
	n := 0
	var failed []Unsettled
	err := s.admin.ReconcileAll(ctx, func(d counter.Drift, err error) {
		switch {
		case err != nil:
			failed = append(failed, Unsettled{Counter: d.Counter, Err: err})
			s.o.Logger.Error("stack: fold failed", "counter", d.Counter, "error", err.Error())
		case d.Drift != 0:
			n++
			s.o.Logger.Info("stack: brought a total up to date", "counter", d.Counter, "total", d.Total, "sum", d.Sum)
		default:
			n++
		}
	})
	if err != nil && !errors.Is(err, counter.ErrSomeFailed) {
		return n, failed, fmt.Errorf("stack: bring totals up to date: %w", err)
	}
	return n, failed, nil
}

// serve serves h on l with the local servers' timeouts.
func (s *Stack) serve(l net.Listener, h http.Handler) {
	sv := &http.Server{Handler: h, ReadHeaderTimeout: readHeaderTimeout, ReadTimeout: readTimeout,
		IdleTimeout: idleTimeout, MaxHeaderBytes: maxHeaderBytes}
	s.servers = append(s.servers, sv)
	go sv.Serve(l)
}

// gate answers only requests addressed to an IP address or localhost, so
// that no page of another site can reach the stack through a name that it
// points at this machine (DNS rebinding); and it refuses new increments
// once the stack is stopping.
func (s *Stack) gate(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !localName(r.Host) {
			httpjson.Error(w, http.StatusMisdirectedRequest, fmt.Sprintf("tally serve answers requests to an IP address or localhost, not to %q", r.Host))
			return
		}
		if r.URL.Path == "/Rollup" && !bridge.Signed(r, s.Bridge.Secret()) {
			// As deployed, where only the trigger's account may call it.
			httpjson.Error(w, http.StatusForbidden, "tally serve takes events on /Rollup only from its emulator's triggers, "+
				"through its bridge: an event from elsewhere could set any count")
			return
		}
		if s.draining.Load() && r.URL.Path == "/Increment" {
			w.Header().Set("Retry-After", "5")
			httpjson.Error(w, http.StatusServiceUnavailable, "tally serve is stopping: nothing was written; retry after the time in Retry-After")
			return
		}
		h.ServeHTTP(w, r)
	})
}

// Config is the functions' configuration in force, its defaults filled in.
func (s *Stack) Config() setup.Config { return s.o.Config }

// Done is closed if the emulator the stack started exits; nil for an
// external emulator.
func (s *Stack) Done() <-chan struct{} {
	if s.Emulator == nil {
		return nil
	}
	return s.Emulator.Done()
}

// localName reports whether host (a Host header) names the machine the way
// no other site can: an IP address, or localhost.
func localName(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.Trim(host, "[]"), ".")
	return net.ParseIP(host) != nil || strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost")
}
