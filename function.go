// Package tally registers tally's Cloud Functions: Increment, an HTTP
// function that adds to one random shard of a counter; Rollup, triggered by
// every shard write, which keeps the counter's total exact; and Reconcile, an
// HTTP function for a scheduled job that repairs drifted totals.
package tally

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"sync"

	"github.com/GoogleCloudPlatform/functions-framework-go/functions"

	"github.com/tallycounters/tally/increment"
	"github.com/tallycounters/tally/internal/cloudlog"
)

func init() {
	functions.HTTP("Increment", lazyHTTP("increment", func(f *Functions) http.Handler { return f.Increment }))
	// Rollup takes Eventarc's CloudEvents over HTTP and reads them with the
	// CloudEvents SDK itself; see rollup.Handler.ServeHTTP for why it is not
	// registered with functions.CloudEvent.
	functions.HTTP("Rollup", lazyHTTP("rollup", func(f *Functions) http.Handler { return f.Rollup }))
	functions.HTTP("Reconcile", lazyHTTP("reconcile", func(f *Functions) http.Handler { return f.Reconcile })) // for the scheduled repair job
}

var (
	setupOnce sync.Once
	shared    *Functions
	setupErr  error
	log       = cloudlog.New(os.Stdout, slog.LevelInfo)
)

// setup builds the functions, with their one Firestore client, from the
// environment. Its error is kept: every call reports it, none gets a nil
// client.
func setup() (*Functions, error) {
	setupOnce.Do(func() {
		shared, setupErr = newApp(context.Background(), os.Getenv)
		if shared != nil {
			log = shared.Log
		}
	})
	return shared, setupErr
}

// newApp builds the functions from the configuration getenv gives.
func newApp(ctx context.Context, getenv func(string) string) (*Functions, error) {
	cfg, err := ConfigFromEnv(getenv)
	if err != nil {
		return nil, err
	}
	return NewFunctions(ctx, cfg, os.Stdout)
}

// lazyHTTP serves name with the handler pick chooses from the shared
// functions, building them on first use; a setup error is logged and
// answered.
func lazyHTTP(name string, pick func(*Functions) http.Handler) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		f, err := setup()
		if err != nil {
			log.Error(name+": setup failed", "error", err.Error())
			increment.WriteError(w, err)
			return
		}
		pick(f).ServeHTTP(w, r)
	}
}
