// Package tally registers tally's Cloud Functions: Increment, an HTTP
// function that adds to one random shard of a counter; Rollup, triggered by
// every shard write, which keeps the counter's total exact; and Reconcile, an
// HTTP function for a scheduled job that repairs drifted totals. It only
// registers them, and builds them, on first use, with package setup
// from the environment.
package tally

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"time"

	framework "github.com/GoogleCloudPlatform/functions-framework-go/functions"

	"github.com/tallycounters/tally/internal/cloudlog"
	"github.com/tallycounters/tally/internal/httpjson"
	"github.com/tallycounters/tally/setup"
)

func init() {
	framework.HTTP("Increment", lazy("increment", func(f *setup.Set) http.Handler { return f.Increment }))
	// Rollup takes Eventarc's CloudEvents over HTTP and reads them with the
	// CloudEvents SDK itself, not with the framework's CloudEvent
	// registration: see rollup.Handler.ServeHTTP for why.
	framework.HTTP("Rollup", lazy("rollup", func(f *setup.Set) http.Handler { return f.Rollup }))
	framework.HTTP("Reconcile", lazy("reconcile", func(f *setup.Set) http.Handler { return f.Reconcile })) // for the scheduled repair job
}

var (
	once sync.Once
	set  *setup.Set
	err  error
)

// built is the functions, built once from the environment with their one
// Firestore client. Its error is kept: every call reports it, none gets a
// nil client.
func built() (*setup.Set, error) {
	once.Do(func() {
		var cfg setup.Config
		if cfg, err = setup.ConfigFromEnv(os.Getenv); err == nil {
			set, err = setup.New(context.Background(), cfg, os.Stdout)
		}
		if err == nil {
			go declare(set)
		}
	})
	return set, err
}

// lazy serves name with the handler pick chooses from the functions,
// building them on first use. A failure to build them is logged with its
// cause and answered with one that says only that: it is no caller's.
func lazy(name string, pick func(*setup.Set) http.Handler) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		f, err := built()
		if err != nil {
			cloudlog.New(os.Stdout, slog.LevelInfo).Error(name+": setup failed", "error", err.Error())
			httpjson.WriteError(w, setup.ErrSetup)
			return
		}
		pick(f).ServeHTTP(w, r)
	}
}

// declare records the functions' settings for the tally command and Go
// clients (setup.Set.Declare), beside the first request: a failure is
// logged, and changes nothing else.
func declare(f *setup.Set) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := f.Declare(ctx, "the deployed functions"); err != nil {
		f.Log.Warn("could not record the functions' settings for the tally command", "error", err.Error())
	}
}
