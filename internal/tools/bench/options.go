package bench

import (
	"cmp"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"time"

	"github.com/tallycounters/tally/internal/core/calendar"
	"github.com/tallycounters/tally/internal/tools/bench/report"
	"github.com/tallycounters/tally/internal/tools/emulator"
)

// Setup is what every runner reads: where it runs, the load's shape in
// time, tally's Rollup instances and how events reach them, and how it
// reports.
type Setup struct {
	Workers  int
	Rate     float64 // increments (or changes) per second over all counters; 0: unlimited
	Duration time.Duration
	Modes    []string // the runner's modes to run, in order; none: all of them

	Spacing   time.Duration // the fold spacing: each parent is written at most once per Spacing
	Instances int           // tally Rollup instances, each a process of its own; each event goes to a random one
	// ClientWrites: tally's mode writes its shards from the client, with
	// no Increment (clientIncrement), and tally's Rollup folds them.
	ClientWrites bool
	// Keys: each increment through Increment carries an Idempotency-Key
	// of its own, as the web client sends every step.
	Keys bool
	// InDocument: tally's Increment writes an increment of a quiet
	// document into the document itself (TALLY_QUIET_IN_DOCUMENT).
	InDocument bool
	// IncrementBilling prices each mode's Increment instances by request
	// (report.BillingRequest, the default) or by instance
	// (report.BillingInstance: each instance's whole life during the
	// load, at that rate, with no fee a request).
	IncrementBilling string
	// IncrementCPU: the vCPU of tally's Increment instances; 0 or 1: one,
	// served in the bench's own process. Less than one (at least 0.08):
	// IncrementInstances processes, each confined to that share of a CPU
	// and taking one request at a time (incrementPool), billed by request.
	IncrementCPU float64
	// IncrementInstances: Increment instances of each mode, each with
	// its own cache and group commit; each request goes to a random one.
	// Default 1.
	IncrementInstances int
	Delivery           string  // report.DeliveryEmulator (default) or report.DeliveryDirect
	DuplicateRate      float64 // share of events delivered twice
	DelayRate          float64 // share of events held back (reordered)
	MaxDelay           time.Duration
	ShardCacheTTL      time.Duration // how long the functions cache a counter's parent; 0: their default

	Project      string
	EmulatorHost string // an emulator already running, started with --functions_emulator at BridgePort
	BridgePort   int
	Emulator     emulator.Paths

	Prices report.Prices // what the report prices operations at; zero: report.StandardPrices
	// Functions: what the report prices the functions' requests, time
	// and events at; zero: report.CloudRunPrices
	Functions report.FunctionPrices
	Settle    time.Duration // longest wait for a mode's counts after its load; default DefaultSettle
	Progress  func(Phase)   // hears how each phase goes; nil: nothing
	Logger    *slog.Logger  // the in-process functions' logs
	LogPath   string        // where the Rollup instances append their debug logs; "" discards them
	// InstanceCommand runs a Rollup instance: a program that calls
	// InstanceMain first thing. Default: this program.
	InstanceCommand []string
}

// Options configures Run: counters under load.
type Options struct {
	Setup
	Counters int // documents; each a counter, or with Fields that many counters in tally's mode
	Fields   int // tally's counts on each document (counts on documents, posts/{id}.f0, ...); 0: the guide layout
	// Timed: with Fields, each document also keeps windows of f0 (a
	// day's, 7 days') and a trend of its counts (timedCounts), as an
	// app's posts do, and is folded once before the load, its windows
	// made, as an app's posts have been.
	Timed bool
	// Shards is how many shards each counter is made with, before the
	// load, which keeps them; 0: counters start as new ones do, on one
	// shard (made by their first increment, or documents without
	// num_shards), and tally's Rollup grows the busy ones.
	Shards int
	// Burst makes each counter quiet first (made, incremented and taken
	// back, and folded), then takes it to Rate at once: a counter that
	// goes viral.
	Burst bool
	// Contention, if not 0, puts the contention stand-in between every
	// client and the emulator: past this many writes a second to one
	// document, writes wait, then fail ABORTED, as on Firestore.
	Contention float64
	Popularity string        // how increments spread over counters: PopularityUniform (default), PopularityZipf or PopularityClient
	Rest       time.Duration // each client rests a random time up to Rest after each answer
	Listeners  bool          // hold a listener on every counter's document, as pages showing it do, and measure what they see
	Feed       bool          // with Listeners: one listener on the counters' collection instead, as a feed page holds
	Warmup     time.Duration // unmeasured load first, so that no mode runs on a cold emulator
	URL        string        // an Increment to drive in tally mode instead of the in-process one
}

// AggregateOptions configures RunAggregate: a count of each post's
// comments, kept three ways.
type AggregateOptions struct {
	Setup
	Counters   int           // posts
	Existing   int           // comments each post has before the load
	Popularity string        // how changes spread over the posts, as Options.Popularity
	Rest       time.Duration // each client rests a random time up to Rest after each change
}

// WindowsOptions configures RunWindows: counts by time, on one hot post
// and Counters quiet ones.
type WindowsOptions struct {
	Setup
	Counters   int // quiet posts, each viewed once in the first bucket
	Boundaries int // starts of a bucket the hot post's load crosses; default 3
	Calendar       // the buckets: minutes in UTC unless it says
}

// Calendar is the buckets of RunWindows's windows: Unit (default minutes)
// in the zone Zone (an IANA name; default UTC), read from the TZif file
// ZoneFile if set, as the Rollup instances read it too. A test gives a
// zone of its own, whose hours are seconds long, so that a run crosses
// its boundaries in seconds.
type Calendar struct {
	Unit     calendar.Unit
	Zone     string
	ZoneFile string
}

// location is the zone c names.
func (c Calendar) location() (*time.Location, error) {
	if c.ZoneFile == "" {
		return time.LoadLocation(cmp.Or(c.Zone, "UTC"))
	}
	b, err := os.ReadFile(c.ZoneFile)
	if err != nil {
		return nil, err
	}
	return time.LoadLocationFromTZData(c.Zone, b)
}

// unit is c's unit.
func (c Calendar) unit() calendar.Unit { return cmp.Or(c.Unit, calendar.Minute) }

// all is o as the environment and the modes read it.
func (o Options) all() settings {
	s := o.Setup.all()
	s.Counters, s.Fields, s.Timed, s.Shards, s.Burst, s.Contention = o.Counters, o.Fields, o.Timed, o.Shards, o.Burst, o.Contention
	s.Popularity, s.Rest, s.Listeners, s.Feed, s.Warmup, s.URL = o.Popularity, o.Rest, o.Listeners, o.Feed, o.Warmup, o.URL
	return s
}

func (o AggregateOptions) all() settings {
	s := o.Setup.all()
	s.Aggregate, s.Counters, s.Existing, s.Popularity, s.Rest = true, o.Counters, o.Existing, o.Popularity, o.Rest
	return s
}

func (o WindowsOptions) all() settings {
	s := o.Setup.all()
	s.Windows, s.Counters, s.Boundaries, s.Calendar = true, o.Counters, o.Boundaries, o.Calendar
	return s
}

func (o Setup) all() settings {
	return settings{Workers: o.Workers, Rate: o.Rate, Duration: o.Duration, Modes: o.Modes,
		Window: o.Spacing, Instances: o.Instances, IncrementInstances: o.IncrementInstances, ClientWrites: o.ClientWrites, Keys: o.Keys, InDocument: o.InDocument, IncrementBilling: o.IncrementBilling, IncrementCPU: o.IncrementCPU, Delivery: o.Delivery, DuplicateRate: o.DuplicateRate,
		DelayRate: o.DelayRate, MaxDelay: o.MaxDelay, ShardCacheTTL: o.ShardCacheTTL,
		Project: o.Project, EmulatorHost: o.EmulatorHost, BridgePort: o.BridgePort, Emulator: o.Emulator,
		Prices: o.Prices, Functions: o.Functions, Settle: o.Settle, Progress: o.Progress, Logger: o.Logger, LogPath: o.LogPath,
		InstanceCommand: o.InstanceCommand}
}

// pickModes sets Modes to all, the runner's modes, if none are given, and
// refuses a mode not among them; flag names the runner.
func (o *settings) pickModes(all []string, flag string) error {
	if len(o.Modes) == 0 {
		o.Modes = all
	}
	for _, m := range o.Modes {
		if !slices.Contains(all, m) {
			return fmt.Errorf("bench: %s mode %q: want some of %v", flag, m, all)
		}
	}
	return nil
}
