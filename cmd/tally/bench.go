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
	"github.com/spf13/pflag"

	"github.com/tallycounters/tally/internal/cloudlog"
	"github.com/tallycounters/tally/internal/fold"
	"github.com/tallycounters/tally/internal/tools/bench"
	"github.com/tallycounters/tally/internal/tools/bench/report"
	"github.com/tallycounters/tally/internal/tools/emulator"
	"github.com/tallycounters/tally/internal/tools/stack"
)

func benchCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure tally against the app's own increments and the per-event rollup",
		Long: "bench starts its own emulator and runs each mode in turn on fresh counters, at the same\n" +
			"load: raw client writes (the ceiling), tally, the guides' per-event rollup, and the\n" +
			"app's own increment of the counted field on its document (plain). It prints a table,\n" +
			"and with --json and --chart, every figure and a chart of them.\n\n" +
			"With --aggregate it measures instead three ways of keeping each post's count of its\n" +
			"comments (comments=count(comments)): tally's Rollup, a per-event trigger that adds +1\n" +
			"or -1 to the post, and a count() query on every read. Comments are created, edited\n" +
			"and deleted at --rate over --counters posts that start with --existing comments each.\n\n" +
			"With --windows it measures counts by time: one hot post takes --rate views a second\n" +
			"(default 300) across --boundaries starts of a minute, while --counters quiet posts\n" +
			"(default 10000) take one view each in the first minute, counted without windows\n" +
			"(plain) and with per-minute, over-3-minutes and trend windows, whose boundary job\n" +
			"runs at each minute's start. It reports each closed bucket, window and trend\n" +
			"against the truth, and what increments and the boundary job cost.\n\n" +
			"With --windows --due N,... it measures instead the boundary job over N due documents,\n" +
			"its parts run --parts at a time (1, 4 and 16), and Reconcile over them: documents a\n" +
			"second, and operations per document; with --pubsub, also the job end to end, its\n" +
			"parts pushed by the Pub/Sub emulator to serve's Reconcile?part.",
		Args: exactArgs(0, "no arguments"),
	}
	b := &benchFlags{o: bench.Options{Setup: bench.Setup{Project: stack.DefaultProject}}}
	f := cmd.Flags()
	b.load(f)
	b.runners(f)
	b.rollups(f)
	b.output(f)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error { return b.run(cmd) }
	return cmd
}

// benchFlags are bench's flags: the load runner's options, which the
// other runners take theirs from, and the flags that pick a runner and
// say where its report goes.
type benchFlags struct {
	o                                   bench.Options
	aggregate, windows, quiet, rank     bool
	extension                           bool
	documents, takeover                 int
	posts                               []int
	crowded                             bool
	existing, boundaries                int
	due, parallel                       []int
	budget                              time.Duration
	pubsub                              bool
	modes, jsonPath, chartPath, logPath string
	soak                                time.Duration
}

// load: the counters and the load on them.
func (b *benchFlags) load(f *pflag.FlagSet) {
	f.IntVar(&b.o.Counters, "counters", 1, "counters to spread the load over (with --fields, documents)")
	f.IntVar(&b.o.Fields, "fields", 0, "counts on each document in tally's mode (TALLY_COUNTS posts:f0,f1,...), each incremented as a counter of its own; 0: a counter per document")
	f.IntVar(&b.o.Shards, "shards", 0, "make each counter with this many shards, which it keeps; 0: counters start as new ones do, on 1 shard (made by their first increment), and grow when busy")
	f.BoolVar(&b.o.Burst, "burst", false, "make each counter quiet first (incremented once and taken back, and folded), then take it to --rate at once: a counter going viral")
	f.Float64Var(&b.o.Contention, "contention", 0, "put a stand-in for Firestore's contention before the emulator: past this many writes a second to one document, writes wait, then fail ABORTED (0: off)")
	f.BoolVar(&b.o.Feed, "feed", false, "with --listeners, hold one listener on the counters' collection instead of one on each counter, as a feed page does")
	f.IntVar(&b.o.Workers, "concurrency", 32, "concurrent clients")
	f.Float64Var(&b.o.Rate, "rate", 500, "target increments per second over all counters (0: as fast as possible)")
	f.StringVar(&b.o.Popularity, "popularity", bench.PopularityUniform, "how increments spread over the counters: uniform (each to a random counter), zipf (Zipf's law, s=1.1: a few hot, most quiet), client (each client has a counter of its own) hot (the first takes 90%, the rest share 10%) or turns (each to the next document in turn)")
	f.DurationVar(&b.o.Rest, "rest", 0, "each client rests a random time up to this after each answer")
	f.BoolVar(&b.o.Listeners, "listeners", false, "hold a listener on every counter, as pages showing it do, and report the visible latency: an increment's answer to a listener seeing it in the total")
	f.DurationVar(&b.o.Duration, "duration", 10*time.Second, "load per mode")
	f.DurationVar(&b.o.Warmup, "warmup", 3*time.Second, "unmeasured load before the first mode")
}

// runners: which runner, and its modes.
func (b *benchFlags) runners(f *pflag.FlagSet) {
	f.BoolVar(&b.aggregate, "aggregate", false, "measure a count of documents (each post's comments) instead of counters; modes: "+strings.Join(bench.AggregateModes, ","))
	f.IntVar(&b.existing, "existing", 10, "with --aggregate: comments each post has before the load")
	f.BoolVar(&b.windows, "windows", false, "measure counts by time instead of counters; modes: "+strings.Join(bench.WindowsModes, ","))
	f.IntVar(&b.boundaries, "boundaries", 3, "with --windows: starts of a minute the load crosses")
	f.IntSliceVar(&b.due, "due", nil, "with --windows, instead of the load: the boundary job over this many due documents (a list: a run each, on an emulator of its own), its parts run --parts at a time, then Reconcile over them")
	f.IntSliceVar(&b.parallel, "parts", []int{1, 4, 16}, "with --due: how many parts run at once, as invocations do (a list: a run each)")
	f.DurationVar(&b.budget, "budget", 0, "with --due: stop each job's run after this long, and report what it moved by then (0: none)")
	f.BoolVar(&b.pubsub, "pubsub", false, "with --due: also run the boundary job end to end, as deployed: serve's Reconcile lists, and the Pub/Sub emulator pushes each part to its Reconcile?part")
	f.BoolVar(&b.rank, "rank", false, "measure ranks instead of counters: a board of --posts posts by likes (Zipf), liked at --rate for --duration (defaults then 200 and 1m) with a viral post climbing, posts deleted and made, every sampled rank checked against the posts at its read time")
	f.BoolVar(&b.crowded, "crowded", false, "with --rank: seed the posts' likes evenly over four cells of the board (2^20 to 2^20+32,767) instead of by Zipf's law, so that every cell holds more than 1,000 posts")
	f.IntSliceVar(&b.posts, "posts", []int{10000, 100000}, "with --rank: posts on the board (a list: a run each, on an emulator of its own)")
	f.BoolVar(&b.extension, "extension-clients", false, "measure clients of the firestore-counter extension's protocol (each on a shard of its own, a listener on its document, its shard and its partials) counting through tally, beside tally's own clients, on --documents documents (defaults then: --concurrency 200 --rate 200); modes: "+strings.Join(bench.ExtensionModes, ","))
	f.IntVar(&b.documents, "documents", 1, "with --extension-clients: documents the clients count on, each client on one")
	f.IntVar(&b.takeover, "extension-takeover", 0, "instead of the modes: time 'tally extension takeover' over this many documents the extension left two shards and a partial under, and count its reads and writes")
	f.StringVar(&b.modes, "modes", strings.Join(bench.AllModes, ","), "modes to run, in order")
	f.DurationVar(&b.soak, "soak", 0, "instead of the modes, soak tally serve's stack for this long while pausing the emulator, killing a Rollup instance and duplicating and delaying events; defaults then: --concurrency 64 --counters 5 --instances 3 --rate 300")
}

// rollups: tally's Rollup instances, and how events reach them.
func (b *benchFlags) rollups(f *pflag.FlagSet) {
	f.DurationVar(&b.o.Spacing, "window", fold.DefaultSpacing, "the fold spacing (TALLY_ROLLUP_WINDOW): each parent is written at most once per this")
	f.IntVar(&b.o.Instances, "instances", 1, "tally Rollup instances, each a process of its own; each event goes to a random one")
	f.StringVar(&b.o.IncrementBilling, "increment-billing", "request", "how Increment's instances are priced: request (while each holds a request, in 100 ms steps, and a fee a request) or instance (each instance's whole life during the load, at Cloud Run's instance-based rate, no fee a request)")
	f.Float64Var(&b.o.IncrementCPU, "increment-cpu", 1, "vCPU of tally's Increment instances, 0.08 to 1; below 1, --increment-instances processes, each confined to that share of a CPU (a cgroup: run as root, or where this user may write one) and taking one request at a time, as Cloud Run runs them, billed by request at that size")
	f.BoolVar(&b.o.Timed, "timed", false, "with --fields: each document also keeps a day's and 7 days' windows of f0 and a trend of all its counts, as an app's posts do, and is folded once before the load (its windows made)")
	f.BoolVar(&b.o.InDocument, "in-document", false, "in tally's mode, write an increment of a quiet document into the document itself, as TALLY_QUIET_IN_DOCUMENT=true does")
	f.BoolVar(&b.o.Keys, "keys", false, "send each increment through Increment with an Idempotency-Key of its own, as the web client sends every step")
	f.BoolVar(&b.o.ClientWrites, "client-writes", false, "in tally's mode, write the shards from the client, with no Increment, as clients that rules let write shards do; tally's Rollup folds them")
	f.IntVar(&b.o.IncrementInstances, "increment-instances", 1, "Increment instances of each mode, each with its own cache and group commit; each request goes to a random one")
	f.StringVar(&b.o.Delivery, "delivery", report.DeliveryEmulator, "how shard events reach the rollups: emulator (its triggers, one at a time) or direct (posted by the bench from each commit, concurrently, as Eventarc does)")
	f.Float64Var(&b.o.DuplicateRate, "duplicate", 0.1, "share of shard events delivered twice")
	f.Float64Var(&b.o.DelayRate, "delay", 0.1, "share of shard events held back, so that later ones overtake them")
	f.DurationVar(&b.o.MaxDelay, "max-delay", 2*time.Second, "longest hold-back of a delayed event")
	f.DurationVar(&b.o.Settle, "settle", bench.DefaultSettle, "longest wait, after the load, for a mode's total")
	f.StringVar(&b.o.EmulatorHost, "emulator", "", "use this running emulator (started with --functions_emulator 127.0.0.1:<bridge-port>)")
	f.IntVar(&b.o.BridgePort, "bridge-port", 0, "port the emulator posts trigger events to (default: a free one)")
	f.StringVar(&b.o.URL, "url", "", "drive this Increment URL in tally mode instead of the in-process one")
}

// output: prices, the report's files, progress and logs.
func (b *benchFlags) output(f *pflag.FlagSet) {
	f.Float64Var(&b.o.Prices.Read, "price-read", report.StandardPrices.Read, "US dollars per 100,000 document reads (Firestore Standard edition, us-central1)")
	f.Float64Var(&b.o.Prices.Write, "price-write", report.StandardPrices.Write, "US dollars per 100,000 document writes")
	f.Float64Var(&b.o.Prices.Delete, "price-delete", report.StandardPrices.Delete, "US dollars per 100,000 document deletes")
	p := report.CloudRunPrices
	f.Float64Var(&b.o.Functions.Request, "price-request", p.Request, "US dollars per million function requests (Cloud Run, request-based billing)")
	f.Float64Var(&b.o.Functions.VCPUSecond, "price-vcpu-second", p.VCPUSecond, "US dollars per vCPU-second of billable instance time (Cloud Run, Tier 1)")
	f.Float64Var(&b.o.Functions.GiBSecond, "price-gib-second", p.GiBSecond, "US dollars per GiB-second of billable instance time (Cloud Run, Tier 1)")
	f.Float64Var(&b.o.Functions.InstanceVCPUSecond, "price-instance-vcpu-second", p.InstanceVCPUSecond, "US dollars per vCPU-second of an instance's life, with --increment-billing instance (Cloud Run, Tier 1)")
	f.Float64Var(&b.o.Functions.InstanceGiBSecond, "price-instance-gib-second", p.InstanceGiBSecond, "US dollars per GiB-second of an instance's life, with --increment-billing instance (Cloud Run, Tier 1)")
	f.Float64Var(&b.o.Functions.PubSubTiB, "price-pubsub-tib", p.PubSubTiB, "US dollars per TiB of events published and pushed (Pub/Sub, Eventarc's transport)")
	f.StringVar(&b.jsonPath, "json", "", "write every figure to `FILE`")
	f.StringVar(&b.chartPath, "chart", "", "draw the run to `FILE` (.svg or .png)")
	f.BoolVarP(&b.quiet, "quiet", "q", false, "no progress bars")
	f.StringVar(&b.logPath, "log", "", "write the functions' debug logs to `FILE`")
}

// run runs the runner the flags pick.
func (b *benchFlags) run(cmd *cobra.Command) error {
	if err := b.check(); err != nil {
		return err
	}
	if err := b.locate(); err != nil {
		return err
	}
	logs, closeLogs, err := b.openLog()
	if err != nil {
		return err
	}
	defer closeLogs()
	var bars *progress
	if !b.quiet {
		bars = newProgress(cmd.ErrOrStderr())
		b.o.Progress = bars.phase
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	switch {
	case b.soak > 0:
		return runSoak(ctx, cmd, b.o, b.soak, bars, b.jsonPath, logs)
	case b.rank:
		return runRank(ctx, cmd, b.rankOptions(cmd), bars, b.jsonPath)
	case b.extension:
		return runExtension(ctx, cmd, b.extensionOptions(cmd), bars, b.jsonPath)
	case b.takeover > 0:
		f, err := bench.RunTakeover(ctx, b.o.Setup, b.takeover, cmd.ErrOrStderr())
		if err != nil {
			return err
		}
		fmt.Fprintf(cmd.OutOrStdout(), "takeover of %d documents (%d shards, %d partials; %d likes moved): %.1f s, %d reads, %d writes of which %d deletes\n",
			f.Documents, f.Shards, f.Partials, f.Moved, f.Seconds, f.Reads, f.Writes, f.Deletes)
		return nil
	case b.windows && len(b.due) > 0:
		return runJobs(ctx, cmd, bench.JobsOptions{Setup: b.o.Setup, Due: b.due, Parallel: b.parallel, Budget: b.budget, PubSub: b.pubsub}, bars, b.jsonPath)
	case b.windows:
		return runWindows(ctx, cmd, b.windowsOptions(cmd), bars, b.jsonPath)
	case b.aggregate:
		ao := bench.AggregateOptions{Setup: b.o.Setup, Counters: b.o.Counters, Existing: b.existing, Popularity: b.o.Popularity, Rest: b.o.Rest}
		if !cmd.Flags().Changed("modes") {
			ao.Modes = bench.AggregateModes
		}
		return runAggregate(ctx, cmd, ao, bars, b.jsonPath)
	}
	return b.runLoad(ctx, cmd, bars)
}

// locate sets the modes, the project and the emulator: one to start, or
// the running one --emulator names.
func (b *benchFlags) locate() error {
	b.o.Modes = strings.Split(b.modes, ",")
	if p := os.Getenv("GOOGLE_CLOUD_PROJECT"); p != "" {
		b.o.Project = p
	}
	if b.o.EmulatorHost != "" {
		if b.o.BridgePort == 0 {
			return usagef("--emulator needs --bridge-port, the port that emulator was started to post events to")
		}
		return nil
	}
	var err error
	b.o.Emulator, err = emulator.LocateEnv(os.Getenv)
	return err
}

// openLog opens --log, if given, for the functions' debug logs.
func (b *benchFlags) openLog() (io.Writer, func(), error) {
	if b.logPath == "" {
		return nil, func() {}, nil
	}
	lf, err := os.OpenFile(b.logPath, os.O_CREATE|os.O_TRUNC|os.O_WRONLY|os.O_APPEND, 0o644) // the Rollup instances append to it too
	if err != nil {
		return nil, nil, err
	}
	b.o.Logger, b.o.LogPath = cloudlog.New(lf, slog.LevelDebug), b.logPath
	return lf, func() { lf.Close() }, nil
}

// windowsOptions are --windows' options, with its own defaults for the
// flags not given.
func (b *benchFlags) windowsOptions(cmd *cobra.Command) bench.WindowsOptions {
	wo := bench.WindowsOptions{Setup: b.o.Setup, Counters: b.o.Counters, Boundaries: b.boundaries}
	if !cmd.Flags().Changed("modes") {
		wo.Modes = bench.WindowsModes
	}
	if !cmd.Flags().Changed("counters") {
		wo.Counters = bench.DefaultQuiet
	}
	if !cmd.Flags().Changed("rate") {
		wo.Rate = 300
	}
	return wo
}

// extensionOptions are --extension-clients' options, with its own
// defaults for the flags not given.
func (b *benchFlags) extensionOptions(cmd *cobra.Command) bench.ExtensionOptions {
	eo := bench.ExtensionOptions{Setup: b.o.Setup, Documents: b.documents}
	if !cmd.Flags().Changed("modes") {
		eo.Modes = bench.ExtensionModes
	}
	if !cmd.Flags().Changed("concurrency") {
		eo.Workers = 200
	}
	if !cmd.Flags().Changed("rate") {
		eo.Rate = 200
	}
	return eo
}

// runExtension runs bench --extension-clients and prints its table.
func runExtension(ctx context.Context, cmd *cobra.Command, o bench.ExtensionOptions, bars *progress, jsonPath string) error {
	rep, err := bench.RunExtension(ctx, o)
	return finish(cmd, rep, rep != nil && len(rep.Modes) > 0, err, bars, jsonPath)
}

// runLoad runs the modes side by side and writes the report: a table,
// and the JSON and the chart if asked for.
func (b *benchFlags) runLoad(ctx context.Context, cmd *cobra.Command, bars *progress) error {
	rep, err := bench.Run(ctx, b.o)
	if bars != nil {
		bars.wait()
	}
	if err != nil {
		return err
	}
	rep.WriteTable(cmd.OutOrStdout())
	if b.jsonPath != "" {
		if err := rep.WriteJSON(b.jsonPath); err != nil {
			return err
		}
	}
	if b.chartPath != "" {
		return rep.WriteChart(b.chartPath)
	}
	return nil
}

// check refuses flags of the load runner given to --windows or
// --aggregate, which would not read them, before anything starts.
func (b *benchFlags) check() error {
	o := b.o
	counters := o.Fields != 0 || o.Shards != 0 || o.Burst || o.URL != "" || o.Listeners || o.Contention != 0
	switch {
	case b.windows && (counters || b.aggregate):
		return usagef("--windows takes none of --fields, --shards, --burst, --url, --listeners, --contention and --aggregate")
	case b.aggregate && counters:
		return usagef("--aggregate takes none of --fields, --shards, --burst, --url, --listeners and --contention")
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

// rankOptions are --rank's options, with its own defaults for the flags
// not given.
func (b *benchFlags) rankOptions(cmd *cobra.Command) bench.RankOptions {
	o := bench.RankOptions{Setup: b.o.Setup, Docs: b.posts, Crowded: b.crowded}
	if !cmd.Flags().Changed("rate") {
		o.Rate = 0
	}
	if !cmd.Flags().Changed("duration") {
		o.Duration = 0
	}
	if !cmd.Flags().Changed("instances") {
		o.Instances = 0
	}
	return o
}

// runRank runs bench --rank and prints its table.
func runRank(ctx context.Context, cmd *cobra.Command, o bench.RankOptions, bars *progress, jsonPath string) error {
	rep, err := bench.RunRank(ctx, o)
	return finish(cmd, rep, rep != nil && len(rep.Runs) > 0, err, bars, jsonPath)
}

// runAggregate runs bench --aggregate and prints its table.
func runAggregate(ctx context.Context, cmd *cobra.Command, o bench.AggregateOptions, bars *progress, jsonPath string) error {
	rep, err := bench.RunAggregate(ctx, o)
	return finish(cmd, rep, err == nil, err, bars, jsonPath)
}

// runJobs runs bench --windows --due and prints its table.
func runJobs(ctx context.Context, cmd *cobra.Command, o bench.JobsOptions, bars *progress, jsonPath string) error {
	rep, err := bench.RunJobs(ctx, o)
	return finish(cmd, rep, rep != nil && len(rep.Runs) > 0, err, bars, jsonPath)
}

// runWindows runs bench --windows and prints its tables.
func runWindows(ctx context.Context, cmd *cobra.Command, o bench.WindowsOptions, bars *progress, jsonPath string) error {
	rep, err := bench.RunWindows(ctx, o)
	return finish(cmd, rep, rep != nil && len(rep.Modes) > 0, err, bars, jsonPath)
}

// benchReport is what a runner reports: tables to print, and JSON.
type benchReport interface {
	WriteTable(io.Writer)
	WriteJSON(path string) error
}

// finish waits for the progress bars to end, prints rep's tables if it
// ran something (a runner that failed part way reports what it ran), and
// then returns err, or writes the report's JSON if asked.
func finish(cmd *cobra.Command, rep benchReport, ran bool, err error, bars *progress, jsonPath string) error {
	if bars != nil {
		bars.wait()
	}
	if ran {
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
