package bench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"time"

	"github.com/tallycounters/tally/internal/fold"
	"github.com/tallycounters/tally/internal/tools/bench/report"
	"github.com/tallycounters/tally/internal/tools/emulator"
	"github.com/tallycounters/tally/internal/tools/stack"
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
	Project       string        // default stack.DefaultProject
	Emulator      emulator.Paths
	Logs          io.Writer   // the functions' JSON log lines; nil discards
	Progress      func(Phase) // nil: nothing
	// InstanceCommand runs a Rollup instance, as settings.InstanceCommand.
	InstanceCommand []string
}

// Soak runs increments through the bench's tally mode (Increment over
// HTTP, the emulator's own trigger events, opts.Instances Rollup instances,
// each a process of its own) and injects faults while the load runs: every
// event may be duplicated or delayed, the emulator is paused (SIGSTOP, then
// SIGCONT), and one Rollup instance is killed, cutting the events it holds,
// and started again. After the load it waits for each total, and reports
// whether each equals the increments acknowledged. Nothing is reconciled
// before that check.
func Soak(ctx context.Context, o SoakOptions) (_ *report.Soak, err error) {
	o = soakDefaults(o)
	e, err := start(ctx, settings{
		Counters: o.Counters, Shards: o.Shards, Workers: o.Workers, Rate: o.Rate, Duration: o.Duration,
		Window: fold.DefaultSpacing, Instances: o.Instances, Delivery: report.DeliveryEmulator, Modes: []string{report.ModeTally},
		DuplicateRate: o.DuplicateRate, DelayRate: o.DelayRate, MaxDelay: o.MaxDelay, Settle: o.Settle,
		Project: o.Project, Emulator: o.Emulator, Logger: slog.New(slog.NewJSONHandler(o.Logs, nil)),
		InstanceCommand: o.InstanceCommand,
	})
	if err != nil {
		return nil, err
	}
	defer e.stop()

	rep := &report.Soak{Options: o.json()}
	run := fmt.Sprintf("soak-%d", time.Now().UnixNano())
	ids := make([]string, o.Counters)
	for i := range ids {
		ids[i] = fmt.Sprintf("%s-%d", run, i)
	}
	start := time.Now()
	faults := make(chan []report.Fault, 1)
	go func() { faults <- e.injectFaults(ctx, o, start) }()
	res := drive(ctx, ids, load{workers: o.Workers, rate: o.Rate}, o.Duration, e.incrementer(report.ModeTally, collTally, e.clients[report.ModeTally]),
		func(el time.Duration, n int64, done bool) {
			soakPhase(o, "soak load", el, o.Duration, fmt.Sprintf("%d increments, %.0f/s", n, float64(n)/max(el.Seconds(), 0.001)), done)
		})
	rep.Faults = <-faults
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rep.Seconds = res.End.Sub(res.Start).Seconds()
	rep.Acked, rep.Errors, rep.Answers = int64(len(res.Acks)), res.Errors, answersByStatus(res.Statuses)
	rep.IncrPerSec = float64(rep.Acked) / rep.Seconds
	slices.Sort(res.Latencies)
	rep.LatencyP50, rep.LatencyP99 = ms(percentile(res.Latencies, .5)), ms(percentile(res.Latencies, .99))
	acked := make([]int64, len(ids))
	for _, a := range res.Acks {
		acked[a.Counter]++
	}
	if err := soakSettle(ctx, o, e, ids, acked, res.End, rep); err != nil {
		return rep, err
	}
	rep.Bridge = e.bridges[report.ModeTally].Stats()
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
	if o.Project == "" {
		o.Project = stack.DefaultProject
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
func (e *env) injectFaults(ctx context.Context, o SoakOptions, start time.Time) []report.Fault {
	var out []report.Fault
	at := func(frac float64) bool {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(time.Until(start.Add(time.Duration(frac * float64(o.Duration))))):
			return true
		}
	}
	note := func(what string) { out = append(out, report.Fault{AtSeconds: time.Since(start).Seconds(), What: what}) }
	if !at(0.2) {
		return out
	}
	switch err := e.pauseEmulator(); {
	case err != nil:
		note(fmt.Sprintf("pausing the emulator failed: %v", err))
	default:
		note(fmt.Sprintf("emulator (process group %d) paused", e.emu.PID()))
		select {
		case <-ctx.Done():
		case <-time.After(o.Pause):
		}
		e.emu.Resume()
		note("emulator resumed")
	}
	if !at(0.6) {
		return out
	}
	e.holding(0, 5*time.Second) // a kill that cuts nothing proves nothing
	held := e.killInstance(0)
	note(fmt.Sprintf("Rollup instance 0 killed, holding %d events", held))
	select {
	case <-ctx.Done():
		return out
	case <-time.After(o.Down):
	}
	if err := e.restartInstance(ctx, 0); err != nil {
		note(fmt.Sprintf("starting Rollup instance 0 again failed: %v", err))
	} else {
		note("Rollup instance 0 started again")
	}
	return out
}
