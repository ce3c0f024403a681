package bench

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"time"

	"github.com/tallycounters/tally"
	"github.com/tallycounters/tally/internal/bridge"
	"github.com/tallycounters/tally/internal/emulator"
	"github.com/tallycounters/tally/internal/stack"
)

// SoakRate is the soak's default rate: within what the emulator's serial
// trigger delivery keeps up with on 2 cores while it also takes the load.
const SoakRate = 300

// SoakOptions configures Soak.
type SoakOptions struct {
	Duration      time.Duration // the load
	Workers       int           // concurrent clients
	Rate          float64       // increments per second over all counters; 0: unlimited
	Counters      int
	Shards        int
	Instances     int           // Rollup instances; one of them is killed and started again
	Pause         time.Duration // how long the emulator is paused
	Down          time.Duration // how long the killed instance stays down
	DuplicateRate float64
	DelayRate     float64
	MaxDelay      time.Duration
	Settle        time.Duration // longest wait, after the load, for the totals
	Emulator      emulator.Paths
	Logs          io.Writer   // the functions' JSON log lines; nil discards
	Progress      func(Phase) // nil: nothing
}

// Soak runs increments through the stack that tally serve runs (the
// emulator with its rules and triggers, the bridge, Increment over HTTP)
// with its events going to opts.Instances Rollup instances, and injects
// faults while the load runs: every event may be duplicated or delayed, the
// emulator is paused (SIGSTOP, then SIGCONT), and one Rollup instance is
// killed, cutting the events it holds, and started again. After the load it
// waits for each total, and reports whether each equals the increments
// acknowledged. Nothing is reconciled before that check.
func Soak(ctx context.Context, o SoakOptions) (_ *SoakReport, err error) {
	o = soakDefaults(o)
	cfg, err := tally.ConfigFromEnv(func(string) string { return "" })
	if err != nil {
		return nil, err
	}
	cfg.Project, cfg.DefaultShards = stack.DefaultProject, o.Shards
	pl := newPool(cfg, o.Logs, o.Instances)
	defer pl.stop()
	front, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	fs := &http.Server{Handler: pl}
	go fs.Serve(front)
	defer fs.Close()
	st, err := stack.Start(ctx, stack.Options{Config: cfg, Emulator: o.Emulator, Logs: o.Logs,
		RollupURL: "http://" + front.Addr().String() + "/Rollup",
		Bridge:    bridge.Options{Faults: bridge.Faults{DuplicateRate: o.DuplicateRate, DelayRate: o.DelayRate, MaxDelay: o.MaxDelay}}})
	if err != nil {
		return nil, err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if serr := st.Stop(sctx); err == nil && serr != nil {
			err = serr
		}
	}()
	for i := range o.Instances {
		if err := pl.start(ctx, i); err != nil {
			return nil, err
		}
	}

	rep := &SoakReport{Options: o.json()}
	run := fmt.Sprintf("soak-%d", time.Now().UnixNano())
	ids := make([]string, o.Counters)
	for i := range ids {
		ids[i] = fmt.Sprintf("%s-%d", run, i)
	}
	start := time.Now()
	faults := make(chan []Fault, 1)
	go func() { faults <- injectFaults(ctx, o, st.Emulator, pl, start) }()
	res := drive(ctx, ids, load{workers: o.Workers, rate: o.Rate}, o.Duration, httpIncrement(st.FunctionsURL+"/Increment", o.Workers, collTally),
		func(el time.Duration, n int64, done bool) {
			soakPhase(o, "soak load", el, o.Duration, fmt.Sprintf("%d increments, %.0f/s", n, float64(n)/max(el.Seconds(), 0.001)), done)
		})
	rep.Faults = <-faults
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rep.Seconds = res.End.Sub(res.Start).Seconds()
	rep.Acked, rep.Errors = int64(len(res.Acks)), res.Errors
	rep.IncrPerSec = float64(rep.Acked) / rep.Seconds
	slices.Sort(res.Latencies)
	rep.LatencyP50, rep.LatencyP99 = ms(percentile(res.Latencies, .5)), ms(percentile(res.Latencies, .99))
	acked := make([]int64, len(ids))
	for _, a := range res.Acks {
		acked[a.Counter]++
	}
	if err := soakSettle(ctx, o, st, ids, acked, res.End, rep); err != nil {
		return rep, err
	}
	rep.Bridge = st.Bridge.Stats()
	return rep, nil
}

func soakDefaults(o SoakOptions) SoakOptions {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&o.Workers, 64)
	def(&o.Counters, 5)
	def(&o.Shards, 10)
	def(&o.Instances, 3)
	if o.Pause <= 0 {
		o.Pause = 5 * time.Second
	}
	if o.Down <= 0 {
		o.Down = 2 * time.Second
	}
	if o.MaxDelay <= 0 {
		o.MaxDelay = 2 * time.Second
	}
	if o.Settle <= 0 {
		o.Settle = DefaultSettle
	}
	if o.Logs == nil {
		o.Logs = io.Discard
	}
	return o
}

func soakPhase(o SoakOptions, name string, elapsed, bound time.Duration, detail string, done bool) {
	if o.Progress != nil {
		o.Progress(Phase{Name: name, Elapsed: elapsed, Bound: bound, Detail: detail, Done: done})
	}
}

// injectFaults pauses the emulator's process group at a fifth of the load,
// for o.Pause, then, at 60% of the load, once Rollup instance 0 holds an
// event (waiting up to 5 s for one), kills it and starts it again o.Down
// later. The emulator is always let go on return.
func injectFaults(ctx context.Context, o SoakOptions, em *emulator.Emulator, pl *pool, start time.Time) []Fault {
	var out []Fault
	at := func(frac float64) bool {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(time.Until(start.Add(time.Duration(frac * float64(o.Duration))))):
			return true
		}
	}
	note := func(what string) { out = append(out, Fault{AtSeconds: time.Since(start).Seconds(), What: what}) }
	if !at(0.2) {
		return out
	}
	if err := em.Pause(); err != nil {
		note(fmt.Sprintf("pausing the emulator failed: %v", err))
	} else {
		note(fmt.Sprintf("emulator (process group %d) paused", em.PID()))
		select {
		case <-ctx.Done():
		case <-time.After(o.Pause):
		}
		em.Resume()
		note("emulator resumed")
	}
	if !at(0.6) {
		return out
	}
	pl.holding(0, 5*time.Second) // a kill that cuts nothing proves nothing
	held := pl.kill(0)
	note(fmt.Sprintf("Rollup instance 0 killed, holding %d events", held))
	select {
	case <-ctx.Done():
		return out
	case <-time.After(o.Down):
	}
	if err := pl.start(ctx, 0); err != nil {
		note(fmt.Sprintf("starting Rollup instance 0 again failed: %v", err))
	} else {
		note("Rollup instance 0 started again")
	}
	return out
}
