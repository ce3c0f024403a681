package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/counter"
	"github.com/tallycounters/tally/increment"
	"github.com/tallycounters/tally/layout"
)

// admin is what every counter command shares: where the counters are, and
// how to print.
type admin struct {
	project, database, collection, field string
	cacheTTL                             time.Duration
	json                                 bool
	stdout, stderr                       io.Writer
}

func (a *admin) flags(fs *flag.FlagSet) {
	fs.StringVar(&a.project, "project", "", "Google Cloud project (default: GOOGLE_CLOUD_PROJECT, demo-tally on the emulator, else detected)")
	fs.StringVar(&a.database, "database", "(default)", "Firestore database")
	fs.StringVar(&a.collection, "collection", layout.DefaultCollection, "collection of counters")
	fs.StringVar(&a.field, "shard-field", layout.DefaultShardField, "integer field of each shard")
	fs.DurationVar(&a.cacheTTL, "cache-ttl", increment.DefaultCacheTTL, "the deployed Increment's TALLY_SHARD_CACHE_TTL (reshard waits it out)")
	fs.BoolVar(&a.json, "json", false, "print JSON for scripts")
}

// client connects to the emulator in FIRESTORE_EMULATOR_HOST, or to the
// project with application default credentials.
func (a *admin) client(ctx context.Context) (*counter.Client, func(), error) {
	l := layout.Layout{Collection: a.collection, ShardField: a.field}
	if err := l.Validate(); err != nil {
		return nil, nil, err
	}
	project := a.project
	if project == "" {
		project = os.Getenv("GOOGLE_CLOUD_PROJECT")
	}
	if project == "" && os.Getenv("FIRESTORE_EMULATOR_HOST") != "" {
		project = "demo-tally"
	}
	if project == "" {
		project = firestore.DetectProjectID
	}
	fs, err := firestore.NewClientWithDatabase(ctx, project, a.database)
	if err != nil {
		return nil, nil, fmt.Errorf("connect to Firestore: %w", err)
	}
	return counter.New(fs, counter.Options{Layout: l, ShardCacheTTL: a.cacheTTL}), func() { fs.Close() }, nil
}

// print writes v as JSON, or text for a person.
func (a *admin) print(v any, text string, args ...any) {
	if a.json {
		b, _ := json.Marshal(v)
		fmt.Fprintln(a.stdout, string(b))
		return
	}
	fmt.Fprintf(a.stdout, text+"\n", args...)
}

// adminCommand builds a counter command: its own flags, the counter id as
// its one argument (unless noID), and an action.
func adminCommand(name string, noID bool, setup func(fs *flag.FlagSet) func(ctx context.Context, a *admin, c *counter.Client, id string) error) func([]string, io.Writer, io.Writer) int {
	return func(args []string, stdout, stderr io.Writer) int {
		fs := flag.NewFlagSet(name, flag.ContinueOnError)
		fs.SetOutput(stderr)
		a := &admin{stdout: stdout, stderr: stderr}
		a.flags(fs)
		action := setup(fs)
		pos, err := parseInterspersed(fs, args)
		if err != nil {
			return 2
		}
		id := ""
		switch {
		case noID && len(pos) > 1, !noID && len(pos) != 1:
			fmt.Fprintf(stderr, "tally %s: want one counter id, got %d arguments\n", name, len(pos))
			return 2
		case len(pos) == 1:
			id = pos[0]
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		c, closeFn, err := a.client(ctx)
		if err != nil {
			fmt.Fprintf(stderr, "tally %s: %v\n", name, err)
			return 1
		}
		defer closeFn()
		if err := action(ctx, a, c, id); err != nil && !errors.Is(err, context.Canceled) {
			fmt.Fprintf(stderr, "tally %s: %v\n", name, err)
			return 1
		}
		return 0
	}
}
