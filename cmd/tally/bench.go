package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/tallycounters/tally/core"
	"github.com/tallycounters/tally/internal/cloudlog"
	"github.com/tallycounters/tally/internal/tools/bench"
	"github.com/tallycounters/tally/internal/tools/bench/report"
	"github.com/tallycounters/tally/internal/tools/emulator"
	"github.com/tallycounters/tally/internal/tools/stack"
)

func benchCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure tally against a single-document counter and the per-event rollup",
		Long: "bench starts its own emulator and runs each mode in turn on fresh counters, at the same\n" +
			"load: raw client writes (the ceiling), tally, the guides' per-event rollup, and a\n" +
			"single-document counter. It prints a table, and with --json and --chart, every figure\n" +
			"and a chart of them.\n\n" +
			"With --aggregate it measures instead three ways of keeping each post's count of its\n" +
			"comments (comments=count(comments)): tally's Rollup, a per-event trigger that adds +1\n" +
			"or -1 to the post, and a count() query on every read. Comments are created, edited\n" +
			"and deleted at --rate over --counters posts that start with --existing comments each.\n\n" +
			"With --windows it measures counts by time: one hot post takes --rate views a second\n" +
			"(default 300) across --boundaries starts of a minute, while --counters quiet posts\n" +
			"(default 10000) take one view each in the first minute, counted without windows\n" +
			"(plain) and with per-minute, over-3-minutes and trend windows, whose boundary job\n" +
			"runs at each minute's start. It reports each closed bucket, window and trend\n" +
			"against the truth, and what increments and the boundary job cost.",
		Args: exactArgs(0, "no arguments"),
	}
	o := bench.Options{Setup: bench.Setup{Project: stack.DefaultProject}}
	var aggregate, windows bool
	var existing, boundaries int
	f := cmd.Flags()
	f.IntVar(&o.Counters, "counters", 1, "counters to spread the load over (with --fields, documents)")
	f.IntVar(&o.Fields, "fields", 0, "counts on each document in tally's mode (TALLY_COUNTS posts:f0,f1,...), each incremented as a counter of its own; 0: a counter per document")
	f.IntVar(&o.Shards, "shards", 0, "make each counter with this many shards, which it keeps; 0: counters start as new ones do, on 1 shard (made by their first increment), and grow when busy")
	f.BoolVar(&o.Burst, "burst", false, "make each counter quiet first (incremented once and taken back, and folded), then take it to --rate at once: a counter going viral")
	f.Float64Var(&o.Contention, "contention", 0, "put a stand-in for Firestore's contention before the emulator: past this many writes a second to one document, writes wait, then fail ABORTED (0: off)")
	f.BoolVar(&o.Feed, "feed", false, "with --listeners, hold one listener on the counters' collection instead of one on each counter, as a feed page does")
	f.IntVar(&o.Workers, "concurrency", 32, "concurrent clients")
	f.Float64Var(&o.Rate, "rate", 500, "target increments per second over all counters (0: as fast as possible)")
	f.StringVar(&o.Popularity, "popularity", bench.PopularityUniform, "how increments spread over the counters: uniform (each to a random counter), zipf (Zipf's law, s=1.1: a few hot, most quiet), client (each client has a counter of its own) hot (the first takes 90%, the rest share 10%) or turns (each to the next document in turn)")
	f.BoolVar(&aggregate, "aggregate", false, "measure a count of documents (each post's comments) instead of counters; modes: "+strings.Join(bench.AggregateModes, ","))
	f.IntVar(&existing, "existing", 10, "with --aggregate: comments each post has before the load")
	f.BoolVar(&windows, "windows", false, "measure counts by time instead of counters; modes: "+strings.Join(bench.WindowsModes, ","))
	f.IntVar(&boundaries, "boundaries", 3, "with --windows: starts of a minute the load crosses")
	f.DurationVar(&o.Rest, "rest", 0, "each client rests a random time up to this after each answer")
	f.BoolVar(&o.Listeners, "listeners", false, "hold a listener on every counter, as pages showing it do, and report the visible latency: an increment's answer to a listener seeing it in the total")
	f.DurationVar(&o.Duration, "duration", 10*time.Second, "load per mode")
	f.DurationVar(&o.Warmup, "warmup", 3*time.Second, "unmeasured load before the first mode")
	f.DurationVar(&o.Window, "window", core.DefaultWindow, "tally's window: each parent is written at most once per window")
	f.IntVar(&o.Instances, "instances", 1, "tally Rollup instances, each a process of its own; each event goes to a random one")
	f.StringVar(&o.Delivery, "delivery", report.DeliveryEmulator, "how shard events reach the rollups: emulator (its triggers, one at a time) or direct (posted by the bench from each commit, concurrently, as Eventarc does)")
	f.Float64Var(&o.DuplicateRate, "duplicate", 0.1, "share of shard events delivered twice")
	f.Float64Var(&o.DelayRate, "delay", 0.1, "share of shard events held back, so that later ones overtake them")
	f.DurationVar(&o.MaxDelay, "max-delay", 2*time.Second, "longest hold-back of a delayed event")
	f.DurationVar(&o.Settle, "settle", bench.DefaultSettle, "longest wait, after the load, for a mode's total")
	f.Float64Var(&o.Prices.Read, "price-read", report.StandardPrices.Read, "US dollars per 100,000 document reads (Firestore Standard edition, us-central1)")
	f.Float64Var(&o.Prices.Write, "price-write", report.StandardPrices.Write, "US dollars per 100,000 document writes")
	f.Float64Var(&o.Prices.Delete, "price-delete", report.StandardPrices.Delete, "US dollars per 100,000 document deletes")
	modes := f.String("modes", strings.Join(bench.AllModes, ","), "modes to run, in order")
	f.StringVar(&o.EmulatorHost, "emulator", "", "use this running emulator (started with --functions_emulator 127.0.0.1:<bridge-port>)")
	f.IntVar(&o.BridgePort, "bridge-port", 0, "port the emulator posts trigger events to (default: a free one)")
	f.StringVar(&o.URL, "url", "", "drive this Increment URL in tally mode instead of the in-process one")
	jsonPath := f.String("json", "", "write every figure to `FILE`")
	chartPath := f.String("chart", "", "draw the run to `FILE` (.svg or .png)")
	quiet := f.BoolP("quiet", "q", false, "no progress bars")
	logPath := f.String("log", "", "write the functions' debug logs to `FILE`")
	soak := f.Duration("soak", 0, "instead of the modes, soak tally serve's stack for this long while pausing the emulator, killing a Rollup instance and duplicating and delaying events; defaults then: --concurrency 64 --counters 5 --instances 3 --rate 300")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
		o.Modes = strings.Split(*modes, ",")
		if p := os.Getenv("GOOGLE_CLOUD_PROJECT"); p != "" {
			o.Project = p
		}
		if o.EmulatorHost == "" {
			var err error
			if o.Emulator, err = emulator.LocateEnv(os.Getenv); err != nil {
				return err
			}
		} else if o.BridgePort == 0 {
			return usagef("--emulator needs --bridge-port, the port that emulator was started to post events to")
		}
		var logs io.Writer
		if *logPath != "" {
			lf, err := os.OpenFile(*logPath, os.O_CREATE|os.O_TRUNC|os.O_WRONLY|os.O_APPEND, 0o644) // the Rollup instances append to it too
			if err != nil {
				return err
			}
			defer lf.Close()
			logs, o.Logger, o.LogPath = lf, cloudlog.New(lf, slog.LevelDebug), *logPath
		}
		var bars *progress
		if !*quiet {
			bars = newProgress(stderr)
			o.Progress = bars.phase
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		if *soak > 0 {
			return runSoak(ctx, cmd, o, *soak, bars, *jsonPath, logs)
		}
		if windows {
			if err := onlyCounters(o, "--windows", aggregate); err != nil {
				return err
			}
			wo := bench.WindowsOptions{Setup: o.Setup, Counters: o.Counters, Boundaries: boundaries}
			if !cmd.Flags().Changed("modes") {
				wo.Modes = bench.WindowsModes
			}
			if !cmd.Flags().Changed("counters") {
				wo.Counters = bench.DefaultQuiet
			}
			if !cmd.Flags().Changed("rate") {
				wo.Rate = 300
			}
			return runWindows(ctx, cmd, wo, bars, *jsonPath)
		}
		if aggregate {
			if err := onlyCounters(o, "--aggregate", false); err != nil {
				return err
			}
			ao := bench.AggregateOptions{Setup: o.Setup, Counters: o.Counters, Existing: existing, Popularity: o.Popularity, Rest: o.Rest}
			if !cmd.Flags().Changed("modes") {
				ao.Modes = bench.AggregateModes
			}
			return runAggregate(ctx, cmd, ao, bars, *jsonPath)
		}
		rep, err := bench.Run(ctx, o)
		if bars != nil {
			bars.wait()
		}
		if err != nil {
			return err
		}
		rep.WriteTable(stdout)
		if *jsonPath != "" {
			if err := rep.WriteJSON(*jsonPath); err != nil {
				return err
			}
		}
		if *chartPath != "" {
			if err := rep.WriteChart(*chartPath); err != nil {
				return err
			}
		}
		return nil
	}
	return cmd
}

// onlyCounters refuses, for the bench's --aggregate or --windows (mode),
// the flags that only a run of counters reads; and --aggregate beside
// --windows.
func onlyCounters(o bench.Options, mode string, aggregate bool) error {
	if o.Fields != 0 || o.Shards != 0 || o.Burst || o.URL != "" || o.Listeners || o.Contention != 0 || aggregate {
		if mode == "--windows" {
			return fmt.Errorf("bench: --windows takes none of --fields, --shards, --burst, --url, --listeners, --contention and --aggregate")
		}
		return fmt.Errorf("bench: --aggregate takes none of --fields, --shards, --burst, --url, --listeners and --contention")
	}
	return nil
}

// runSoak runs the soak with the bench's flags, and the soak's own defaults
// for those not given.
func runSoak(ctx context.Context, cmd *cobra.Command, o bench.Options, d time.Duration, bars *progress, jsonPath string, logs io.Writer) error {
	so := bench.SoakOptions{Duration: d, Workers: o.Workers, Rate: o.Rate, Counters: o.Counters, Shards: o.Shards, Instances: o.Instances,
		DuplicateRate: o.DuplicateRate, DelayRate: o.DelayRate, MaxDelay: o.MaxDelay, Settle: o.Settle, Emulator: o.Emulator}
	f := cmd.Flags()
	for name, v := range map[string]*int{"concurrency": &so.Workers, "counters": &so.Counters, "instances": &so.Instances} {
		if !f.Changed(name) {
			*v = 0 // the soak's default
		}
	}
	if !f.Changed("rate") {
		so.Rate = bench.SoakRate
	}
	if bars != nil {
		so.Progress = bars.phase
	}
	so.Logs = logs
	rep, err := bench.Soak(ctx, so)
	if bars != nil {
		bars.wait()
	}
	if rep != nil {
		rep.WriteTable(cmd.OutOrStdout())
	}
	if err != nil {
		return err
	}
	if jsonPath != "" {
		if err := rep.WriteJSON(jsonPath); err != nil {
			return err
		}
	}
	if rep.Lost != 0 || rep.Extra != 0 || rep.ExactAfter == nil {
		return fmt.Errorf("soak: totals are not the acknowledged increments: lost %d, extra %d", rep.Lost, rep.Extra)
	}
	return nil
}

// runAggregate runs bench --aggregate and prints its table.
func runAggregate(ctx context.Context, cmd *cobra.Command, o bench.AggregateOptions, bars *progress, jsonPath string) error {
	rep, err := bench.RunAggregate(ctx, o)
	if bars != nil {
		bars.wait()
	}
	if err != nil {
		return err
	}
	rep.WriteTable(cmd.OutOrStdout())
	if jsonPath != "" {
		return rep.WriteJSON(jsonPath)
	}
	return nil
}

// runWindows runs bench --windows and prints its tables.
func runWindows(ctx context.Context, cmd *cobra.Command, o bench.WindowsOptions, bars *progress, jsonPath string) error {
	rep, err := bench.RunWindows(ctx, o)
	if bars != nil {
		bars.wait()
	}
	if rep != nil && len(rep.Modes) > 0 {
		rep.WriteTable(cmd.OutOrStdout())
	}
	if err != nil {
		return err
	}
	if jsonPath != "" {
		return rep.WriteJSON(jsonPath)
	}
	return nil
}
