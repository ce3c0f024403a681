package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"cloud.google.com/go/firestore"
	"github.com/spf13/cobra"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tallycounters/tally/counter"
	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/extension"
	"github.com/tallycounters/tally/internal/tools/emulator"
	"github.com/tallycounters/tally/internal/tools/stack"
	"github.com/tallycounters/tally/setup"
)

// EnvEmulator is where the Firestore client finds the emulator.
const EnvEmulator = "FIRESTORE_EMULATOR_HOST"

// settings are the flags that override the functions' configuration.
type settings struct {
	cmd                                  *cobra.Command
	project, database, collection, field string
	counts, shards                       string
	json                                 bool
	timeout                              time.Duration
}

// configFlags adds the flags that override the configuration's place of
// the counters to cmd.
func configFlags(cmd *cobra.Command) *settings {
	s := &settings{cmd: cmd}
	f := cmd.Flags()
	f.StringVar(&s.project, "project", "", "Google Cloud project ("+setup.EnvProject+"; "+stack.DefaultProject+" on the emulator)")
	f.StringVar(&s.database, "database", "", "Firestore database ("+setup.EnvDatabase+"; default (default))")
	f.StringVar(&s.collection, "collection", "", "collection of counters ("+setup.EnvCollection+"; default counters)")
	f.StringVar(&s.field, "shard-field", "", "integer field of each shard ("+setup.EnvShardField+"; default count)")
	f.StringVar(&s.counts, "counts", "", "counts on your documents, such as 'posts:likes,views;users/*/posts:likes' ("+setup.EnvCounts+")")
	f.StringVar(&s.shards, "shards-collection", "", "subcollection of shards under each counted document ("+setup.EnvShards+"; default shards)")
	f.String("extension-counters", "", "the firestore-counter extension's `COUNTERS` to take over, such as 'pages:likes,stats.views': Rollup moves its clients' shards under those documents into them ("+setup.EnvExtension+"; docs/extension.md)")
	return s
}

// clientFlags adds what commands that talk to Firestore take besides.
func (s *settings) clientFlags() {
	s.cmd.Flags().BoolVar(&s.json, "json", false, "print one JSON object per line, for scripts")
	s.cmd.Flags().DurationVar(&s.timeout, "timeout", 10*time.Second, "bound on each Firestore call")
}

// config is the functions' configuration from the environment, with the
// flags given on top. A bad value is a usage error naming its variable.
func (s *settings) config() (setup.Config, error) { return s.configWith(os.Getenv) }

// configWith is config with the environment read through getenv, and
// the flags given in place of the settings they stand for.
func (s *settings) configWith(getenv func(string) string) (setup.Config, error) {
	flags := map[string]string{}
	f := s.cmd.Flags()
	for flag, env := range map[string]string{
		"project": setup.EnvProject, "database": setup.EnvDatabase, "collection": setup.EnvCollection,
		"shard-field": setup.EnvShardField, "counts": setup.EnvCounts, "shards-collection": setup.EnvShards,
		"extension-counters": setup.EnvExtension,
	} {
		if f.Changed(flag) {
			flags[env] = f.Lookup(flag).Value.String()
		}
	}
	cfg, err := setup.ConfigFromEnv(func(key string) string {
		if v, ok := flags[key]; ok {
			return v
		}
		return getenv(key)
	})
	if err != nil {
		return setup.Config{}, usageError{err}
	}
	if cfg.Project == "" && os.Getenv(EnvEmulator) != "" {
		cfg.Project = stack.DefaultProject
	}
	return cfg, nil
}

// layoutFlags are the flags that set a variable of the layout.
var layoutFlags = map[string]string{setup.EnvCollection: "collection", setup.EnvShardField: "shard-field",
	setup.EnvCounts: "counts", setup.EnvShards: "shards-collection"}

// layoutGiven reports whether the environment or a flag sets any of the
// settings the functions record (counter.DeclaredVars): then they are
// taken as given, and what the database records is not read.
func (s *settings) layoutGiven() bool {
	for _, v := range counter.DeclaredVars {
		if os.Getenv(v) != "" || layoutFlags[v] != "" && s.cmd.Flags().Changed(layoutFlags[v]) {
			return true
		}
	}
	return false
}

// declared is the configuration with the layout the functions recorded
// in the database fs (counter.Declared), for when the environment and the
// flags give none (layoutGiven): the tally command follows serve, or a
// deployment, from the database's address alone. recorded is false if
// nothing is, and cfg is then answered as it is.
func (s *settings) declared(ctx context.Context, fs *firestore.Client, cfg setup.Config) (_ setup.Config, recorded bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	d, err := counter.Declared(ctx, fs)
	if errors.Is(err, counter.ErrNotDeclared) {
		return cfg, false, nil
	}
	if err != nil {
		return cfg, false, explain(err, s.timeout)
	}
	cfg, err = s.configWith(func(k string) string { return cmp.Or(os.Getenv(k), d.Getenv(k)) })
	if err != nil {
		return cfg, true, fmt.Errorf("the functions' settings recorded at %s: %w", counter.DeclaredPath, err)
	}
	return cfg, true, nil
}

// notDeclared adds to an error about a counter id what to set when the
// layout is the guide's because nothing told the command otherwise.
func notDeclared(err error, id string, recorded bool) error {
	if !strings.Contains(id, "/") {
		return err
	}
	if recorded {
		return fmt.Errorf("%w. %s looks like a document's path, but the functions here declare no counts on documents "+
			"(their %s is empty, as %s records)", err, id, setup.EnvCounts, counter.DeclaredPath)
	}
	return fmt.Errorf("%w. %s looks like a document's path: counts on documents are declared by %s, and this database "+
		"records none (no tally function or serve has started on it): set %s, or --counts, as the functions have it",
		err, id, setup.EnvCounts, setup.EnvCounts)
}

// sources says where each variable's value came from: a flag, the
// environment, or the default.
func (s *settings) sources() map[string]string {
	flags := map[string]string{setup.EnvProject: "project", setup.EnvDatabase: "database",
		setup.EnvCollection: "collection", setup.EnvShardField: "shard-field", setup.EnvCounts: "counts", setup.EnvShards: "shards-collection"}
	out := map[string]string{}
	cfg, _ := setup.ConfigFromEnv(func(string) string { return "" })
	for _, v := range cfg.Vars() {
		switch {
		case flags[v.Name] != "" && s.cmd.Flags().Changed(flags[v.Name]):
			out[v.Name] = "flag --" + flags[v.Name]
		case os.Getenv(v.Name) != "":
			out[v.Name] = "environment"
		default:
			out[v.Name] = "default"
		}
	}
	return out
}

// open connects to cfg's database and, unless the flags or the
// environment give the layout, takes the settings the functions recorded
// there: the client (the caller closes it), the configuration in force,
// and whether one was recorded.
func (s *settings) open(ctx context.Context, cfg setup.Config) (*firestore.Client, setup.Config, bool, error) {
	fs, err := connect(ctx, cfg)
	if err != nil {
		return nil, cfg, false, err
	}
	if s.layoutGiven() {
		return fs, cfg, false, nil
	}
	cfg, recorded, err := s.declared(ctx, fs, cfg)
	if err != nil {
		fs.Close()
		return nil, cfg, false, err
	}
	return fs, cfg, recorded, nil
}

// connected runs a command's work on the database its settings name: with
// a context that ends on Ctrl-C or SIGTERM, the client (closed when run
// returns), and the configuration in force (open's).
func (s *settings) connected(run func(ctx context.Context, fs *firestore.Client, cfg setup.Config) error) error {
	cfg, err := s.config()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	fs, cfg, _, err := s.open(ctx, cfg)
	if err != nil {
		return err
	}
	defer fs.Close()
	return run(ctx, fs, cfg)
}

// connect checks the emulator, if one is set, and opens a client for cfg.
func connect(ctx context.Context, cfg setup.Config) (*firestore.Client, error) {
	if host := os.Getenv(EnvEmulator); host != "" {
		if err := emulator.Check(host); err != nil {
			return nil, fmt.Errorf("%v (%s=%s). Start one with 'tally serve', which prints the value to export, "+
				"or unset %s to use a Google Cloud project", err, EnvEmulator, host, EnvEmulator)
		}
	}
	project := cfg.Project
	if project == "" {
		project = firestore.DetectProjectID
	}
	fs, err := counter.NewFirestoreClient(ctx, project, cfg.Database)
	if err != nil {
		return nil, explain(fmt.Errorf("connect to Firestore: %w", err), 0)
	}
	return fs, nil
}

// explain turns what Firestore answered into what to do about it.
func explain(err error, timeout time.Duration) error {
	switch {
	case err == nil:
		return nil
	case strings.Contains(err.Error(), "could not find default credentials"):
		return fmt.Errorf("no Google credentials found, and %s is not in this command's environment. "+
			"To use the local emulator, run the line 'tally serve' prints, 'export %s=127.0.0.1:PORT' "+
			"(a shell variable set without export is not seen by the commands it runs); "+
			"for a Google Cloud project, run 'gcloud auth application-default login' and give --project", EnvEmulator, EnvEmulator)
	case errors.Is(err, context.DeadlineExceeded) || status.Code(err) == codes.DeadlineExceeded || status.Code(err) == codes.Unavailable:
		if host := os.Getenv(EnvEmulator); host != "" {
			return fmt.Errorf("the Firestore emulator at %s=%s did not answer within %v (--timeout): is it still running? (%v)",
				EnvEmulator, host, timeout, err)
		}
		return fmt.Errorf("no answer from Firestore within %v (--timeout): %w", timeout, err)
	}
	return err
}

// layoutOf is c's Layout, as tally's packages take it.
func layoutOf(c setup.Config) core.Layout { return core.MustParse(c.Layout) }

// extensionOf is the configuration's firestore-counter extension's
// counters, as tally's packages take them (read by ConfigFromEnv already).
func extensionOf(c setup.Config) extension.Counters {
	ext, _ := extension.ParseCounters(c.ExtensionCounters.String())
	return ext
}
