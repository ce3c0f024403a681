package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/tallycounters/tally/increment"
	"github.com/tallycounters/tally/internal/cloudlog"
	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/cputime"
	"github.com/tallycounters/tally/internal/tools/bench/report"
	"github.com/tallycounters/tally/internal/tools/opcount"
	"github.com/tallycounters/tally/rollup"
)

// EnvInstance, when set, makes a program that calls InstanceMain one of the
// bench's Rollup instances; its value is the instance's instanceSpec, as
// JSON.
const EnvInstance = "TALLY_BENCH_INSTANCE"

// instanceSpec is what a Rollup instance process is started with.
type instanceSpec struct {
	Host       string            `json:"host"` // the emulator
	Project    string            `json:"project"`
	Collection string            `json:"collection"`
	ShardField string            `json:"shard_field"`
	Counts     string            `json:"counts,omitempty"` // counts on documents, as TALLY_COUNTS
	Window     time.Duration     `json:"window"`
	Grow       rollup.GrowPolicy `json:"grow"`               // zero: counters keep their shards
	LogPath    string            `json:"log_path,omitempty"` // debug logs, appended; "" discards
	Calendar   Calendar          `json:"calendar,omitzero"`  // the buckets of windows
	// Increment, when set, makes the instance one of tally's Increment
	// instances of less than one vCPU (incrementPool) instead.
	Increment *incrementSpec `json:"increment,omitempty"`
}

// InstanceStats is what one Rollup instance did since its counts were last
// reset, and its memory.
type InstanceStats struct {
	Requests  int64 `json:"requests"`   // Rollup requests taken
	Refused   int64 `json:"refused"`    // answered 429, holding report.MaxRequestsPerInstance
	MostHeld  int64 `json:"most_held"`  // requests held at once, at most
	Held      int64 `json:"held"`       // requests held now
	Reads     int64 `json:"reads"`      // Firestore documents read, verifies included
	Verifies  int64 `json:"verifies"`   // commits that verified a document's existence
	Writes    int64 `json:"writes"`     // Firestore documents written, deletes included
	Deletes   int64 `json:"deletes"`    // Firestore documents deleted
	Failed    int64 `json:"failed"`     // writes of commits that failed
	PeakRSS   int64 `json:"peak_rss"`   // bytes: the process's resident set at its highest
	PeakHeap  int64 `json:"peak_heap"`  // bytes: Go heap objects at their most
	HeapAfter int64 `json:"heap_after"` // bytes: Go heap objects live now
	// Bill: the requests it took, as Cloud Run bills them (meter);
	// CPUSeconds: the CPU time the process used.
	Bill       meterStats `json:"bill"`
	CPUSeconds float64    `json:"cpu_seconds"`
}

// InstanceMain runs this process as one of the bench's Rollup instances,
// and exits, when the bench started it so (EnvInstance is set); otherwise
// it returns at once. Programs that run the bench call it first thing: the
// bench starts its instances as copies of its own program.
func InstanceMain() {
	spec := os.Getenv(EnvInstance)
	if spec == "" {
		return
	}
	if err := serveInstance(spec, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "bench instance: %v\n", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// FoldWrite is one write of a parent by an instance's fold: the commit's
// update time, and the total it wrote.
type FoldWrite struct {
	Counter string    `json:"counter"`
	At      time.Time `json:"at"`
	Total   int64     `json:"total"`
	// Of an aggregate: the fold's read time, and the ranges of child ids
	// whose parts it refolded at that time, [lo, hi) ("" hi: no end).
	ReadAt time.Time   `json:"read_at,omitzero"`
	Ranges [][2]string `json:"ranges,omitempty"`
}

// functionInstance is the serving side of one instance: of Rollup, or
// of Increment (instanceSpec.Increment).
type functionInstance struct {
	handler  http.Handler
	layout   core.Layout
	ops      *opcount.Ops
	mu       sync.Mutex
	folds    []FoldWrite // not yet taken by the bench
	requests atomic.Int64
	refused  atomic.Int64
	inflight atomic.Int64
	most     atomic.Int64
	peakHeap atomic.Int64
	meter    meter
	metered  http.Handler // handler, counted on meter
	cpuAt    atomic.Int64 // cputime.Used() at the last reset, in nanoseconds
}

// serveInstance serves Rollup at /Rollup (or Increment at /Increment),
// its figures at /stats and their reset at /reset, prints its address on
// out, and returns on SIGTERM or SIGINT.
func serveInstance(specJSON string, out io.Writer) error {
	var spec instanceSpec
	if err := json.Unmarshal([]byte(specJSON), &spec); err != nil {
		return fmt.Errorf("%s: %w", EnvInstance, err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	logger := slog.New(slog.DiscardHandler)
	if spec.LogPath != "" {
		f, err := os.OpenFile(spec.LogPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		logger = cloudlog.New(f, slog.LevelDebug)
	}
	in := &functionInstance{ops: &opcount.Ops{}}
	in.cpuAt.Store(int64(cputime.Used()))
	client, err := opcount.Client(ctx, spec.Host, spec.Project, in.ops)
	if err != nil {
		return err
	}
	defer client.Close()
	lay := core.Layout{Collection: spec.Collection, ShardField: spec.ShardField}
	if lay.Docs, err = core.ParseCounts(spec.Counts); err != nil {
		return err
	}
	if lay.Zone, err = spec.Calendar.location(); err != nil {
		return err
	}
	in.layout = lay
	path := "/Rollup"
	if inc := spec.Increment; inc != nil {
		path, in.handler = "/Increment", oneAtATime(increment.New(client, increment.Config{Layout: lay.Settings(), AutoCreate: true, DefaultShards: inc.Shards,
			CacheTTL: inc.CacheTTL, InDocument: inc.InDocument, Spacing: spec.Window, Logger: logger}))
	} else {
		in.handler = rollup.New(client, rollup.Config{Layout: lay.Settings(), Project: spec.Project, Spacing: spec.Window, Grow: spec.Grow, Logger: logger, OnFold: in.folded})
	}
	in.metered = in.meter.wrap(in.handler)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle(path, in)
	mux.HandleFunc("GET /stats", in.serveStats)
	mux.HandleFunc("POST /reset", in.serveReset)
	mux.HandleFunc("POST /folds", in.serveFolds)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(l)
	go in.sampleHeap(ctx)
	fmt.Fprintln(out, l.Addr().String())
	<-ctx.Done()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	srv.Shutdown(sctx)
	return nil
}

// ServeHTTP holds at most MaxRequestsPerInstance requests, as Cloud Run
// does at its highest concurrency, and answers 429 past that.
func (in *functionInstance) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := in.inflight.Add(1)
	defer in.inflight.Add(-1)
	if n > report.MaxRequestsPerInstance {
		in.refused.Add(1)
		http.Error(w, "too many requests", http.StatusTooManyRequests)
		return
	}
	in.requests.Add(1)
	for m := in.most.Load(); n > m && !in.most.CompareAndSwap(m, n); m = in.most.Load() {
	}
	in.metered.ServeHTTP(w, r)
}

func (in *functionInstance) serveStats(w http.ResponseWriter, _ *http.Request) {
	st := InstanceStats{
		Requests: in.requests.Load(), Refused: in.refused.Load(), MostHeld: in.most.Load(), Held: in.inflight.Load(),
		Reads: in.ops.Reads(), Verifies: in.ops.Verifies(), Writes: in.ops.Writes(), Deletes: in.ops.Deletes(), Failed: in.ops.Failed(), PeakRSS: peakRSS(), PeakHeap: in.peakHeap.Load(), HeapAfter: heapObjects(),
		Bill: in.meter.read(), CPUSeconds: (cputime.Used() - time.Duration(in.cpuAt.Load())).Seconds(),
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(st)
}

// folded keeps each write a fold made.
func (in *functionInstance) folded(f rollup.FoldInfo) {
	if !f.Wrote {
		return
	}
	in.mu.Lock()
	for i, c := range in.layout.Counts(f.Counter) {
		key := in.layout.Path(f.Counter)
		if in.layout.OnDocs() {
			key += "." + c.Field
		}
		in.folds = append(in.folds, FoldWrite{Counter: key, At: f.Updated, Total: f.Totals[i]})
	}
	for name, v := range f.Aggregates {
		n, ok := v.(int64)
		if !ok {
			continue // the bench keeps counts
		}
		fw := FoldWrite{Counter: in.layout.Path(f.Counter) + "." + name, At: f.Updated, Total: n, ReadAt: f.AsOf, Ranges: f.Ranges}
		in.folds = append(in.folds, fw)
	}
	in.mu.Unlock()
}

// serveFolds hands over the fold writes made since the last call.
func (in *functionInstance) serveFolds(w http.ResponseWriter, _ *http.Request) {
	in.mu.Lock()
	folds := in.folds
	in.folds = nil
	in.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(folds)
}

// serveReset zeroes the counts and the peaks, for the next mode.
func (in *functionInstance) serveReset(w http.ResponseWriter, _ *http.Request) {
	in.requests.Store(0)
	in.refused.Store(0)
	in.most.Store(in.inflight.Load())
	in.ops.Reset()
	in.meter.reset()
	in.cpuAt.Store(int64(cputime.Used()))
	in.peakHeap.Store(heapObjects())
	// Writing 5 to clear_refs resets the peak resident set (VmHWM).
	os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
	w.WriteHeader(http.StatusNoContent)
}

// sampleHeap keeps the most bytes of Go heap objects seen, every 20 ms.
func (in *functionInstance) sampleHeap(ctx context.Context) {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		h := heapObjects()
		for m := in.peakHeap.Load(); h > m && !in.peakHeap.CompareAndSwap(m, h); m = in.peakHeap.Load() {
		}
	}
}

// heapObjects is the bytes of Go heap objects, live or not yet swept.
func heapObjects() int64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}

// peakRSS is the process's highest resident set (VmHWM), in bytes; 0 where
// /proc does not say.
func peakRSS() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}
