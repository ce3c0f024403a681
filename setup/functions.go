// Package setup builds tally's three functions from their
// configuration, on one Firestore client: Increment, Rollup and
// Reconcile, as the functions framework serves them in the cloud (see the
// root package, which registers them) and as tally serve serves them
// locally. Only it, and the tally command, read the environment
// (ConfigFromEnv); the Firestore client reads FIRESTORE_EMULATOR_HOST
// itself.
package setup

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"

	"cloud.google.com/go/compute/metadata"
	"cloud.google.com/go/firestore"
	firebase "firebase.google.com/go/v4"

	"github.com/tallycounters/tally/counter"
	"github.com/tallycounters/tally/increment"
	"github.com/tallycounters/tally/internal/cloudlog"
	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/extension"
	"github.com/tallycounters/tally/internal/fanout"
	"github.com/tallycounters/tally/internal/fsrpc"
	"github.com/tallycounters/tally/rollup"
)

// Set is tally's three HTTP functions built from one Config, on one
// Firestore client: what the functions framework serves in the cloud, and
// what tally serve serves locally.
type Set struct {
	Increment http.Handler
	Rollup    *rollup.Handler
	Reconcile http.Handler
	Client    *firestore.Client
	Log       *slog.Logger

	topic *fanout.Topic // nil: the jobs' parts run in-process
	cfg   Config
}

// ErrSetup answers a call to a function that could not be built (a bad
// configuration, no project): its cause is in the logs, not the answer.
var ErrSetup error = &core.Error{Code: core.Internal, Message: setupMessage}

// setupMessage is ErrSetup's answer.
const setupMessage = "this function could not start, so nothing was done: its logs say why"

// New builds the functions for cfg, logging JSON lines to logs.
// With no project configured it asks the metadata server, as Cloud
// Functions (2nd gen) does not set GOOGLE_CLOUD_PROJECT.
func New(ctx context.Context, cfg Config, logs io.Writer) (*Set, error) {
	logger := cloudlog.New(logs, cfg.LogLevel)
	if cfg.Project == "" && metadata.OnGCE() {
		p, err := metadata.ProjectIDWithContext(ctx)
		if err != nil {
			return nil, fmt.Errorf("functions: project from the metadata server: %w", err)
		}
		cfg.Project = p
	}
	if cfg.Project == "" {
		return nil, fmt.Errorf("functions: no project: set %s", EnvProject)
	}
	if cfg.Database == "" {
		cfg.Database = DefaultDatabase // a Config built in code, as ConfigFromEnv's default
	}
	if _, err := core.Parse(cfg.Layout); err != nil {
		return nil, fmt.Errorf("functions: %w", err) // a Config built in code: ConfigFromEnv read it
	}
	client, err := fsrpc.NewClient(ctx, cfg.Project, cfg.Database, logger)
	if err != nil {
		return nil, fmt.Errorf("functions: firestore client for project %q, database %q: %w", cfg.Project, cfg.Database, err)
	}
	grow := rollup.GrowPolicy{}
	if cfg.AutoGrow {
		grow = cfg.Grow
	}
	grow.Default = cfg.DefaultShards
	verifier, appCheck, err := firebaseVerifiers(ctx, cfg)
	if err != nil {
		client.Close()
		return nil, err
	}
	topic, err := topicOf(ctx, cfg)
	if err != nil {
		client.Close()
		return nil, err
	}
	var pub Publisher // nil, not a nil *fanout.Topic, when there is no topic
	if topic != nil {
		pub = topic
	}
	return &Set{
		Increment: increment.New(client, increment.Config{
			Layout: cfg.Layout, DefaultShards: cfg.DefaultShards, AutoCreate: cfg.AutoCreate,
			MaxStep: cfg.MaxStep, CORSOrigins: cfg.CORSOrigins, CacheTTL: cfg.CacheTTL, Logger: logger,
			Auth: verifier, Public: cfg.Public, PublicMaxStep: cfg.PublicMaxStep, CounterPattern: cfg.CounterPattern,
			IdempotencyTTL: cfg.IdempotencyTTL, MaxInFlight: cfg.MaxInFlight,
			Limits: cfg.Limits, VotesOnly: cfg.VotesOnly, AppCheck: appCheck,
			InDocument: cfg.InDocument, Spacing: cfg.Spacing,
		}),
		Rollup: rollup.New(client, rollup.Config{
			Layout: cfg.Layout, Project: cfg.Project, Database: cfg.Database, Spacing: cfg.Spacing, Grow: grow, Logger: logger,
			ExtensionCounters: cfg.ExtensionCounters, ExtensionQuiet: cfg.ExtensionQuiet,
		}),
		Reconcile: reconcileHandler(&jobs{
			c: counter.New(client, counter.Options{
				Layout: cfg.Layout, DefaultShards: cfg.DefaultShards, ShardCacheTTL: cfg.CacheTTL, Spacing: cfg.Spacing,
			}),
			log: logger, pub: pub, partSize: cfg.PartSize, listFor: cmp.Or(cfg.ListFor, DefaultListFor),
			sweep: sweepOf(client, cfg),
		}),
		Client: client,
		Log:    logger,
		topic:  topic,
		cfg:    cfg,
	}, nil
}

// topicOf is the topic the jobs' parts are published to, nil if none is
// configured.
func topicOf(ctx context.Context, cfg Config) (*fanout.Topic, error) {
	if cfg.PartsTopic == "" {
		return nil, nil
	}
	t, err := fanout.NewTopic(ctx, cfg.Project, cfg.PartsTopic)
	if err != nil {
		return nil, fmt.Errorf("functions: %s: %w", EnvPartsTopic, err)
	}
	return t, nil
}

// firebaseVerifiers builds, with the Firebase Admin SDK, what checks
// callers: their ID tokens (TALLY_AUTH=firebase; the SDK honours
// FIREBASE_AUTH_EMULATOR_HOST) and their App Check tokens (TALLY_APP_CHECK),
// whose public keys the SDK fetches once here, and then every 6 hours.
func firebaseVerifiers(ctx context.Context, cfg Config) (increment.TokenVerifier, increment.AppCheckVerifier, error) {
	if cfg.Auth != AuthFirebase && !cfg.AppCheck {
		return nil, nil, nil
	}
	app, err := firebase.NewApp(ctx, &firebase.Config{ProjectID: cfg.Project})
	if err != nil {
		return nil, nil, fmt.Errorf("functions: Firebase for project %q: %w", cfg.Project, err)
	}
	var tokens increment.TokenVerifier
	var apps increment.AppCheckVerifier
	if cfg.Auth == AuthFirebase {
		if tokens, err = app.Auth(ctx); err != nil {
			return nil, nil, fmt.Errorf("functions: Firebase Auth for project %q: %w", cfg.Project, err)
		}
	}
	if cfg.AppCheck {
		if apps, err = app.AppCheck(ctx); err != nil {
			return nil, nil, fmt.Errorf("functions: Firebase App Check for project %q: its public keys: %w", cfg.Project, err)
		}
	}
	return tokens, apps, nil
}

// Handler serves the functions at /Increment, /Rollup and /Reconcile, as
// the functions framework serves them when no FUNCTION_TARGET is set.
func (f *Set) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/Increment", f.Increment)
	mux.Handle("/Rollup", f.Rollup)
	mux.Handle("/Reconcile", f.Reconcile)
	return mux
}

// Fanout says how the jobs' parts run: FanoutPubSub, through the topic
// named, or FanoutInProcess.
func (f *Set) Fanout() (mode, topic string) {
	if f.topic == nil {
		return FanoutInProcess, ""
	}
	return FanoutPubSub, f.topic.Name()
}

// Close closes the Firestore client, and the publisher of parts.
func (f *Set) Close() error {
	if f.topic != nil {
		f.topic.Close()
	}
	return f.Client.Close()
}

// Declare records, at counter.DeclaredPath, the settings that make the
// functions' layout, so that the tally command and Go clients given only
// the database read the same documents (counter.Declared): one read, and
// one write when they changed. by names who runs them.
func (f *Set) Declare(ctx context.Context, by string) error {
	env := map[string]string{}
	for _, v := range f.cfg.Vars() {
		if slices.Contains(counter.DeclaredVars, v.Name) {
			env[v.Name] = v.Value
		}
	}
	return counter.Declare(ctx, f.Client, env, by)
}

// sweepOf is Reconcile's sweep of the firestore-counter extension's
// shards, with TALLY_EXTENSION_COUNTERS: nil without. It keeps the
// extension's state, which an extension that still runs uses.
func sweepOf(client *firestore.Client, cfg Config) func(context.Context) (extension.Report, error) {
	if cfg.ExtensionCounters.None() {
		return nil
	}
	ext, _ := extension.ParseCounters(cfg.ExtensionCounters.String()) // read by ConfigFromEnv already
	l := core.MustParse(cfg.Layout)                                   // New read it
	return func(ctx context.Context) (extension.Report, error) {
		return extension.Takeover(ctx, client, l, extension.TakeoverOptions{Counters: ext, Quiet: cfg.ExtensionQuiet, KeepState: true})
	}
}
