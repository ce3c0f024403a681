package counter

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	"cloud.google.com/go/firestore"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tallycounters/tally/layout"
)

// DeclaredPath is the document where the functions record, as they start,
// the settings that make their Layout: tally_config/functions. A client
// given only the database reads its Layout there (Declared).
const DeclaredPath = "tally_config/functions"

// EnvWindow is the rollup's fold spacing, recorded beside the Layout.
const EnvWindow = "TALLY_ROLLUP_WINDOW"

// EnvExtension is the variable of the firestore-counter extension's
// counters that Rollup takes over (setup.EnvExtension): recorded too, so
// that the tally command reads their documents' counts.
const EnvExtension = "TALLY_EXTENSION_COUNTERS"

// DeclaredVars are the settings the functions record: those LayoutFromEnv
// reads, the fold spacing, and the extension's counters taken over.
var DeclaredVars = []string{layout.EnvCollection, layout.EnvShardField, layout.EnvCounts, layout.EnvTimeZone,
	layout.EnvShards, layout.EnvVoters, layout.EnvKeys, EnvWindow, EnvExtension}

// ErrNotDeclared means the database records no functions' settings: no
// function (or tally serve) of this version has started on it.
var ErrNotDeclared = errors.New("this database records no functions' settings (" + DeclaredPath + "): " +
	"no tally function has started on it yet")

// Declaration is what the functions recorded: Env holds DeclaredVars'
// values, By which of them wrote it.
type Declaration struct {
	Env map[string]string
	By  string
}

// Getenv reads the recorded settings as os.Getenv reads the environment,
// for LayoutFromEnv.
func (d Declaration) Getenv(key string) string { return d.Env[key] }

// Declare records env, the values of DeclaredVars the functions run with,
// at DeclaredPath: one read, and one write if what is recorded differs.
// by says who runs them (Increment, tally serve).
func Declare(ctx context.Context, fs *firestore.Client, env map[string]string, by string) error {
	had, err := Declared(ctx, fs)
	if err == nil && maps.Equal(had.Env, env) {
		return nil
	}
	if err != nil && !errors.Is(err, ErrNotDeclared) {
		return err
	}
	data := map[string]any{"env": env, "by": by, "written": firestore.ServerTimestamp}
	if _, err := fs.Doc(DeclaredPath).Set(ctx, data); err != nil {
		return fmt.Errorf("record the functions' settings at %s: %w", DeclaredPath, err)
	}
	return nil
}

// Declared reads what the functions recorded at DeclaredPath (one read):
// ErrNotDeclared if nothing.
func Declared(ctx context.Context, fs *firestore.Client) (Declaration, error) {
	snap, err := fs.Doc(DeclaredPath).Get(ctx)
	if status.Code(err) == codes.NotFound {
		return Declaration{}, ErrNotDeclared
	}
	if err != nil {
		return Declaration{}, fmt.Errorf("read the functions' settings at %s: %w", DeclaredPath, err)
	}
	d := Declaration{Env: map[string]string{}}
	d.By, _ = snap.Data()["by"].(string)
	env, _ := snap.Data()["env"].(map[string]any)
	for k, v := range env {
		if s, ok := v.(string); ok {
			d.Env[k] = s
		}
	}
	return d, nil
}

// NewDeclared is a Client for the functions that recorded their settings
// in fs's database (Declare): their Layout and fold spacing, with o's
// other fields, so that a Go app given only the database reads and writes
// what they do. One read; ErrNotDeclared if nothing is recorded.
func NewDeclared(ctx context.Context, fs *firestore.Client, o Options) (*Client, error) {
	d, err := Declared(ctx, fs)
	if err != nil {
		return nil, err
	}
	if o.Layout, err = LayoutFromEnv(d.Getenv); err != nil {
		return nil, fmt.Errorf("counter: the settings recorded at %s: %w", DeclaredPath, err)
	}
	if w := d.Env[EnvWindow]; w != "" {
		if o.Spacing, err = time.ParseDuration(w); err != nil {
			return nil, fmt.Errorf("counter: the settings recorded at %s: %s=%q: %w", DeclaredPath, EnvWindow, w, err)
		}
	}
	return New(fs, o), nil
}
