package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/tallycounters/tally/internal/bench"
	"github.com/tallycounters/tally/internal/cloudlog"
	"github.com/tallycounters/tally/rollup"
)

func runBench(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := bench.Options{}
	fs.IntVar(&o.Counters, "counters", 1, "counters to spread the load over")
	fs.IntVar(&o.Shards, "shards", 10, "shards per counter")
	fs.IntVar(&o.Workers, "concurrency", 32, "concurrent clients")
	fs.Float64Var(&o.Rate, "rate", 500, "target increments per second over all counters (0: as fast as possible)")
	fs.DurationVar(&o.Duration, "duration", 10*time.Second, "load per mode")
	fs.DurationVar(&o.Warmup, "warmup", 3*time.Second, "unmeasured load before the first mode")
	fs.DurationVar(&o.Window, "window", rollup.DefaultWindow, "tally's window: each parent is written at most once per window")
	fs.IntVar(&o.Instances, "instances", 1, "tally Rollup instances, each with its own handler and Firestore client; each event goes to a random one")
	fs.StringVar(&o.Delivery, "delivery", bench.DeliveryEmulator, "how shard events reach the rollups: emulator (its triggers, one at a time) or direct (posted by the bench from each commit, concurrently, as Eventarc does)")
	fs.Float64Var(&o.DuplicateRate, "duplicate", 0.1, "share of shard events the bridge delivers twice")
	fs.Float64Var(&o.DelayRate, "delay", 0.1, "share of shard events the bridge holds back, so that later ones overtake them")
	fs.DurationVar(&o.MaxDelay, "max-delay", 2*time.Second, "longest hold-back of a delayed event")
	modes := fs.String("modes", strings.Join(bench.AllModes, ","), "modes to run, in order")
	fs.StringVar(&o.EmulatorHost, "emulator", "", "use this running emulator (started with --functions_emulator 127.0.0.1:<bridge-port>)")
	fs.IntVar(&o.BridgePort, "bridge-port", 0, "port the emulator posts trigger events to (default: a free one)")
	fs.StringVar(&o.URL, "url", "", "drive this Increment URL in tally mode instead of the in-process one")
	jsonPath := fs.String("json", "", "write every figure to `FILE`")
	chartPath := fs.String("chart", "", "draw parent writes/s and lag over time, tally against per-event rollup, to `FILE.svg`")
	quiet := fs.Bool("q", false, "no progress bar")
	logPath := fs.String("log", "", "write the functions' debug logs to `FILE`")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	o.Modes = strings.Split(*modes, ",")
	o.Project = localProject()
	if o.EmulatorHost == "" {
		var ok bool
		if o.Emulator, ok = locateEmulator("bench", stderr); !ok {
			return 1
		}
	} else if o.BridgePort == 0 {
		fmt.Fprintln(stderr, "tally bench: --emulator needs --bridge-port, the port that emulator was started to post events to")
		return 2
	}
	if !*quiet {
		o.Progress = progressBar(stderr)
	}
	if *logPath != "" {
		f, err := os.Create(*logPath)
		if err != nil {
			fmt.Fprintf(stderr, "tally bench: %v\n", err)
			return 1
		}
		defer f.Close()
		o.Logger = cloudlog.New(f, slog.LevelDebug)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := bench.Run(ctx, o)
	if !*quiet {
		fmt.Fprintln(stderr)
	}
	if err != nil {
		fmt.Fprintf(stderr, "tally bench: %v\n", err)
		return 1
	}
	rep.WriteTable(stdout)
	if *jsonPath != "" {
		if err := rep.WriteJSON(*jsonPath); err != nil {
			fmt.Fprintf(stderr, "tally bench: %v\n", err)
			return 1
		}
	}
	if *chartPath != "" {
		if err := rep.WriteChart(*chartPath); err != nil {
			fmt.Fprintf(stderr, "tally bench: %v\n", err)
			return 1
		}
	}
	return 0
}

// progressBar redraws one line per mode on w.
func progressBar(w io.Writer) func(mode string, elapsed, total time.Duration, acked int64) {
	last := ""
	return func(mode string, elapsed, total time.Duration, acked int64) {
		if last != "" && last != mode {
			fmt.Fprintln(w)
		}
		last = mode
		const width = 30
		done := min(width, int(float64(width)*elapsed.Seconds()/total.Seconds()))
		rate := float64(acked) / max(elapsed.Seconds(), 0.001)
		fmt.Fprintf(w, "\r%-7s [%s%s] %5.1fs/%.0fs %7d increments %6.0f/s",
			mode, strings.Repeat("#", done), strings.Repeat(".", width-done), elapsed.Seconds(), total.Seconds(), acked, rate)
	}
}
