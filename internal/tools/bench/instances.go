package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	cehttp "github.com/cloudevents/sdk-go/v2/protocol/http"

	"github.com/tallycounters/tally/increment"
	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/tools/bench/report"
	"github.com/tallycounters/tally/internal/tools/proc"
	"github.com/tallycounters/tally/rollup"
)

// instance is one of tally's Rollup instances: a process of its own, with
// its own Firestore client and heap, as on Cloud Run.
type instance struct {
	cmd   *exec.Cmd
	group *proc.Group
	url   string // http://127.0.0.1:port
	done  chan struct{}
}

// startInstance starts one Rollup instance process: this program again
// (or o.InstanceCommand), told by EnvInstance to serve Rollup.
func (e *env) startInstance(ctx context.Context, spec instanceSpec) (*instance, error) {
	js, _ := json.Marshal(spec)
	argv := e.o.InstanceCommand
	if len(argv) == 0 {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("bench: find this program, to start Rollup instances: %w", err)
		}
		argv = []string{exe}
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), EnvInstance+"="+string(js))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	group, err := proc.Start(cmd) // killed with the bench, if it dies without stopping it
	if err != nil {
		return nil, fmt.Errorf("bench: start a Rollup instance: %w", err)
	}
	in := &instance{cmd: cmd, group: group, done: make(chan struct{})}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		if sc.Scan() {
			addr <- strings.TrimSpace(sc.Text())
		}
		close(addr)
		for sc.Scan() {
		}
	}()
	go func() { cmd.Wait(); close(in.done) }()
	select {
	case a, ok := <-addr:
		if ok && a != "" {
			if _, _, err := net.SplitHostPort(a); err == nil {
				in.url = "http://" + a
				return in, nil
			}
		}
	case <-time.After(instanceBound): // it says, or exits, long before on any machine
	case <-ctx.Done():
	}
	in.stop()
	return nil, fmt.Errorf("bench: the Rollup instance %s did not say where it serves", argv[0])
}

// stop ends the instance and waits for it.
func (in *instance) stop() {
	in.group.Terminate()
	select {
	case <-in.done:
	case <-time.After(10 * time.Second):
		in.group.Kill()
		<-in.done
	}
}

// instanceBound bounds an instance's start and each call to it: it
// answers in milliseconds on an idle machine; the bound is for one many
// times slower, or a hang.
const instanceBound = 2 * time.Minute

var instanceClient = &http.Client{Timeout: instanceBound}

// stats asks the instance what it did since its last reset.
func (in *instance) stats() (InstanceStats, error) {
	var st InstanceStats
	resp, err := instanceClient.Get(in.url + "/stats")
	if err != nil {
		return st, fmt.Errorf("bench: Rollup instance stats: %w", err)
	}
	defer resp.Body.Close()
	return st, json.NewDecoder(resp.Body).Decode(&st)
}

// folds takes the fold writes the instance made since the last call.
func (in *instance) folds() ([]FoldWrite, error) {
	resp, err := instanceClient.Post(in.url+"/folds", "", nil)
	if err != nil {
		return nil, fmt.Errorf("bench: Rollup instance folds: %w", err)
	}
	defer resp.Body.Close()
	var out []FoldWrite
	return out, json.NewDecoder(resp.Body).Decode(&out)
}

// pullFolds records in the observer the parent writes every instance made
// since the last pull.
func (e *env) pullFolds() error {
	for _, in := range e.instances {
		folds, err := in.folds()
		if err != nil {
			return err
		}
		for _, f := range folds {
			e.obs.wrote(f.Counter, f.At, f.Total)
		}
	}
	return nil
}

// reset zeroes the instance's counts and peaks.
func (in *instance) reset() error {
	resp, err := instanceClient.Post(in.url+"/reset", "", nil)
	if err != nil {
		return fmt.Errorf("bench: reset a Rollup instance: %w", err)
	}
	resp.Body.Close()
	return nil
}

// serveFunctions serves each rollup mode's Increment in this process, the
// per-event rollup beside it, and starts tally's o.Instances Rollup
// instances, each a process of its own; the bridge sends each event to a
// random one, as the platform spreads events over instances.
func (e *env) serveFunctions(ctx context.Context, l net.Listener) error {
	mux := http.NewServeMux()
	for _, m := range []string{report.ModeTally, report.ModeNaive} {
		lay := tallyLayout(e.o)
		if m == report.ModeNaive {
			lay = core.Default()
			lay.Collection = collNaive
		}
		c := e.clients[m]
		incs := make([]http.Handler, e.o.IncrementInstances)
		for i := range incs {
			incs[i] = e.meter(fmt.Sprintf("%s/Increment/%d", m, i)).wrap(
				increment.New(c, increment.Config{Layout: lay.Settings(), AutoCreate: true, DefaultShards: e.o.Shards, CacheTTL: e.o.ShardCacheTTL,
					InDocument: e.o.InDocument && m == report.ModeTally, Spacing: e.o.Window}))
		}
		mux.HandleFunc("/"+m+"/Increment", func(w http.ResponseWriter, r *http.Request) {
			if m == report.ModeTally && e.incPool != nil {
				e.incPool.ServeHTTP(w, r)
				return
			}
			incs[rand.IntN(len(incs))].ServeHTTP(w, r)
		})
		if m == report.ModeNaive {
			mux.Handle("/"+m+"/Rollup", e.meter(m+"/Rollup").wrap(cloudEventHandler(naiveRollup(c, lay, e.obs.added))))
		}
	}
	mux.Handle("/"+report.AggTrigger+"/Rollup", cloudEventHandler(e.perEventTrigger(e.clients[report.AggTrigger])))
	e.serve(l, mux)
	spec := instanceSpec{Host: e.host, Project: e.o.Project, Collection: collTally, ShardField: core.DefaultShardField,
		Counts: core.FormatCounts(tallyLayout(e.o).Docs), Window: e.o.Window, LogPath: e.o.LogPath, Calendar: e.o.Calendar}
	if e.o.Shards == 0 {
		spec.Grow = rollup.DefaultGrow // new counters grow as deployed; given shards are kept
	}
	e.spec = spec
	if e.o.IncrementCPU < 1 {
		inc := spec
		inc.Increment = &incrementSpec{Shards: e.o.Shards, CacheTTL: e.o.ShardCacheTTL, InDocument: e.o.InDocument}
		var err error
		if e.incPool, err = e.startIncrementPool(ctx, inc, e.o.IncrementInstances, e.o.IncrementCPU); err != nil {
			return err
		}
	}
	for range e.o.Instances {
		in, err := e.startInstance(ctx, spec)
		if err != nil {
			return err
		}
		e.instances = append(e.instances, in)
	}
	e.retarget()
	return nil
}

// retarget has the bridge send tally's events to its instances, at random.
func (e *env) retarget() {
	var targets []string
	for _, in := range e.instances {
		targets = append(targets, in.url+"/Rollup")
	}
	e.bridges[report.ModeTally].SetTargets(targets)
}

// pauseEmulator stops the emulator's processes where they are, as a
// machine that stalls would; an emulator the bench did not start is left
// alone.
func (e *env) pauseEmulator() error {
	if e.emu == nil {
		return errors.New("the emulator is not the bench's own")
	}
	return e.emu.Pause()
}

// holding waits, for at most d, until Rollup instance i holds an event.
func (e *env) holding(i int, d time.Duration) {
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if st, err := e.instances[i].stats(); err != nil || st.Held > 0 {
			return
		}
	}
}

// killInstance kills Rollup instance i at once, cutting the events it
// holds, which the bridge then sends again to the others, as Eventarc
// retries; it says how many it held.
func (e *env) killInstance(i int) int64 {
	in := e.instances[i]
	st, _ := in.stats()
	in.group.Kill()
	<-in.done
	return st.Held
}

// restartInstance starts Rollup instance i again, as the platform would.
func (e *env) restartInstance(ctx context.Context, i int) error {
	in, err := e.startInstance(ctx, e.spec)
	if err != nil {
		return err
	}
	e.instances[i] = in
	e.retarget()
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
