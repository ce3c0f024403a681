// Package tally registers tally's Cloud Functions: Increment, an HTTP
// function that adds to one random shard of a counter; Rollup, triggered by
// every shard write, which keeps the counter's total exact; and Reconcile, an
// HTTP function for a scheduled job that repairs drifted totals.
package tally

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"sync"

	"cloud.google.com/go/compute/metadata"
	"cloud.google.com/go/firestore"
	"github.com/GoogleCloudPlatform/functions-framework-go/functions"

	"github.com/tallycounters/tally/counter"
	"github.com/tallycounters/tally/increment"
	"github.com/tallycounters/tally/internal/cloudlog"
	"github.com/tallycounters/tally/rollup"
)

func init() {
	functions.HTTP("Increment", lazyHTTP("increment", func(a *app) http.Handler { return a.increment }))
	// Rollup takes Eventarc's CloudEvents over HTTP and reads them with the
	// CloudEvents SDK itself; see rollup.Handler.ServeHTTP for why it is not
	// registered with functions.CloudEvent.
	functions.HTTP("Rollup", lazyHTTP("rollup", func(a *app) http.Handler { return a.rollup }))
	functions.HTTP("Reconcile", lazyHTTP("reconcile", func(a *app) http.Handler { return a.reconcile })) // for the scheduled repair job
}

// app is built once per instance, on first use.
type app struct {
	increment *increment.Handler
	rollup    *rollup.Handler
	reconcile http.Handler
}

var (
	setupOnce sync.Once
	shared    *app
	setupErr  error
	log       = cloudlog.New(os.Stdout, slog.LevelInfo)
)

// setup builds the shared Firestore client and handlers from the
// environment. Its error is kept: every call reports it, none gets a nil client.
func setup() (*app, error) {
	setupOnce.Do(func() {
		var logger *slog.Logger
		shared, logger, setupErr = newApp(context.Background(), os.Getenv)
		if logger != nil {
			log = logger
		}
	})
	return shared, setupErr
}

// newApp builds the handlers from the configuration getenv gives.
func newApp(ctx context.Context, getenv func(string) string) (*app, *slog.Logger, error) {
	cfg, err := ConfigFromEnv(getenv)
	if err != nil {
		return nil, nil, err
	}
	logger := cloudlog.New(os.Stdout, cfg.LogLevel)
	if cfg.Project == "" && metadata.OnGCE() {
		// Cloud Functions (2nd gen) does not set GOOGLE_CLOUD_PROJECT.
		if cfg.Project, err = metadata.ProjectIDWithContext(ctx); err != nil {
			return nil, logger, fmt.Errorf("tally: project from the metadata server: %w", err)
		}
	}
	if cfg.Project == "" {
		return nil, logger, fmt.Errorf("tally: no project: set %s", EnvProject)
	}
	client, err := firestore.NewClientWithDatabase(ctx, cfg.Project, cfg.Database)
	if err != nil {
		return nil, logger, fmt.Errorf("tally: firestore client for project %q, database %q: %w", cfg.Project, cfg.Database, err)
	}
	return &app{
		increment: increment.New(client, increment.Config{
			Layout: cfg.Layout, DefaultShards: cfg.DefaultShards, AutoCreate: cfg.AutoCreate,
			MaxStep: cfg.MaxStep, CORSOrigins: cfg.CORSOrigins, CacheTTL: cfg.CacheTTL, Logger: logger,
		}),
		rollup: rollup.New(client, rollup.Config{
			Layout: cfg.Layout, Project: cfg.Project, Database: cfg.Database, Window: cfg.Window, Grow: cfg.Grow, Logger: logger,
		}),
		reconcile: counter.New(client, counter.Options{
			Layout: cfg.Layout, DefaultShards: cfg.DefaultShards, ShardCacheTTL: cfg.CacheTTL, Window: cfg.Window,
		}).
			ReconcileHandler(logger),
	}, logger, nil
}

// lazyHTTP serves name with the handler pick chooses from the shared app,
// building it on first use; a setup error is logged and answered.
func lazyHTTP(name string, pick func(*app) http.Handler) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		a, err := setup()
		if err != nil {
			log.Error(name+": setup failed", "error", err.Error())
			increment.WriteError(w, err)
			return
		}
		pick(a).ServeHTTP(w, r)
	}
}
