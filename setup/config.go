package setup

import (
	"cmp"
	"fmt"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // the functions run where no zoneinfo may be: TALLY_TIME_ZONE needs its own

	"github.com/tallycounters/tally/counter"
	"github.com/tallycounters/tally/increment"
	"github.com/tallycounters/tally/internal/adder"
	"github.com/tallycounters/tally/internal/cloudlog"
	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/fold"
	"github.com/tallycounters/tally/layout"
	"github.com/tallycounters/tally/rollup"
)

// DefaultDatabase is the database the functions count in when none is
// set: Firestore's default one.
const DefaultDatabase = "(default)"

// Environment variables read by the functions (ConfigFromEnv). Nothing
// else of tally reads the environment but the tally command, and the
// clients of the emulators: Firestore's (and internal/fsrpc, which dials
// it as Firestore's does) in FIRESTORE_EMULATOR_HOST, Firebase Auth's in
// FIREBASE_AUTH_EMULATOR_HOST.
const (
	EnvProject       = "GOOGLE_CLOUD_PROJECT"
	EnvDatabase      = "TALLY_DATABASE" // default DefaultDatabase
	EnvCollection    = layout.EnvCollection
	EnvShardField    = layout.EnvShardField
	EnvCounts        = layout.EnvCounts
	EnvTimeZone      = layout.EnvTimeZone
	EnvShards        = layout.EnvShards
	EnvVoters        = layout.EnvVoters
	EnvKeys          = layout.EnvKeys
	EnvDefaultShards = "TALLY_DEFAULT_SHARDS" // default 1: a counter starts on one shard, and grows when busy
	EnvAutoCreate    = "TALLY_AUTO_CREATE"    // default true
	EnvMaxStep       = "TALLY_MAX_STEP"       // default 1000, at most MaxStep
	EnvCORSOrigins   = "TALLY_CORS_ORIGINS"   // comma-separated; "*" for any
	EnvCacheTTL      = "TALLY_SHARD_CACHE_TTL"
	EnvLogLevel      = "TALLY_LOG_LEVEL"      // debug, info, warning, error
	EnvWindow        = counter.EnvWindow      // default 1s
	EnvAutoGrow      = "TALLY_AUTO_GROW"      // default true
	EnvGrowPerShard  = "TALLY_GROW_PER_SHARD" // writes/s a shard should take; default 1
	EnvGrowMax       = "TALLY_GROW_MAX_SHARDS"
	EnvGrowPeriod    = "TALLY_GROW_PERIOD"
	EnvShrinkAfter   = "TALLY_SHRINK_AFTER"      // default 10m; 0: never
	EnvAuth          = "TALLY_AUTH"              // none (default) or firebase
	EnvPublic        = "TALLY_PUBLIC"            // default false: anyone may call Increment
	EnvCounterPat    = "TALLY_COUNTER_PATTERN"   // ids a public Increment may create
	EnvPublicMaxStep = "TALLY_PUBLIC_MAX_STEP"   // default 1
	EnvIdemTTL       = "TALLY_IDEMPOTENCY_TTL"   // default 24h
	EnvMaxInFlight   = "TALLY_MAX_IN_FLIGHT"     // increments one instance works on at once; default 100
	EnvPublicRate    = "TALLY_PUBLIC_RATE"       // plain steps one user may make on one counter; default 10/m when public and signed in
	EnvUserRate      = "TALLY_PUBLIC_USER_RATE"  // plain steps one user may make over all counters; default 100/m when public and signed in
	EnvVotesOnly     = "TALLY_PUBLIC_VOTES_ONLY" // a public Increment takes votes only; default false
	EnvAppCheck      = "TALLY_APP_CHECK"         // verify Firebase App Check tokens; default false
	EnvInDocument    = "TALLY_QUIET_IN_DOCUMENT" // an increment of a quiet document is written into it, not to a shard; default false
	EnvPartsTopic    = "TALLY_PARTS_TOPIC"       // Pub/Sub topic the jobs' parts fan out through; default none: they run in-process
	EnvPartSize      = "TALLY_PART_SIZE"         // documents a part of a job holds at most; default 1000
	EnvExtension     = counter.EnvExtension      // the firestore-counter extension's counters whose shards Rollup moves into their documents (pages:likes,stats.views); default none
	EnvExtQuiet      = "TALLY_EXTENSION_QUIET"   // how long after a client's last write its shard is left unmoved; default 10s
)

// Defaults of the public limits, in force when Increment is public and
// takes signed-in users only.
const (
	DefaultPublicRate = "10/m"
	DefaultUserRate   = "100/m"
)

// Values of TALLY_AUTH.
const (
	AuthNone     = "none"
	AuthFirebase = "firebase"
)

// Config is everything the functions are configured with.
type Config struct {
	Project       string        // empty: detected from the environment
	Database      string        // empty: DefaultDatabase
	Layout        layout.Layout // where the counters are and what they count: counter.LayoutFromEnv
	DefaultShards int
	AutoCreate    bool
	MaxStep       int64
	CORSOrigins   []string
	CacheTTL      time.Duration
	LogLevel      slog.Level
	Spacing       time.Duration
	AutoGrow      bool
	Grow          rollup.GrowPolicy // in force when AutoGrow is on

	Auth           string         // AuthNone or AuthFirebase
	Public         bool           // anyone may call Increment
	CounterPattern *regexp.Regexp // ids a public Increment may create; nil: none
	PublicMaxStep  int64
	IdempotencyTTL time.Duration
	MaxInFlight    int              // increments one Increment instance works on at once
	Limits         increment.Limits // how often one signed-in user may make a plain step
	VotesOnly      bool             // a public Increment takes votes only
	InDocument     bool             // an increment of a quiet document is written into it (core/own.go)
	AppCheck       bool             // Increment verifies Firebase App Check tokens

	// ExtensionCounters are the firestore-counter extension's counters
	// Rollup moves into their documents: the documents and fields its
	// clients count, nothing else (docs/extension.md); none: off.
	ExtensionCounters rollup.ExtensionCounters
	// ExtensionQuiet is how long after a client's last write of its
	// shard a move may take it (rollup.Config.ExtensionQuiet).
	ExtensionQuiet time.Duration

	PartsTopic string        // Pub/Sub topic of the jobs' parts; "": they run in the invocation that lists them
	PartSize   int           // documents a part holds at most
	ListFor    time.Duration // how long a job lists its documents in one invocation; 0: DefaultListFor
}

// MaxPartSize bounds TALLY_PART_SIZE: a part's message of names stays
// well within Pub/Sub's 10 MB, and its documents within one read of many.
const MaxPartSize = 10000

// MaxStep bounds TALLY_MAX_STEP, so that a counter's shards sum past int64
// only after about 9 * 10^12 increments of the largest step.
const MaxStep = 1_000_000

// ConfigFromEnv reads the configuration through getenv (os.Getenv in
// production) and checks it; the first bad value is the error.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	env := core.Settings(getenv)
	cfg := Config{
		Project:  env(EnvProject, ""),
		Database: env(EnvDatabase, DefaultDatabase),
	}
	var err error
	if cfg.Layout, err = counter.LayoutFromEnv(getenv); err != nil {
		return Config{}, fmt.Errorf("config: %w", err)
	}
	if !validDatabase(cfg.Database) {
		return Config{}, fmt.Errorf("config: %s=%q is not a database id: (default), or 4 to 63 of a-z, 0-9 and '-', "+
			"starting with a letter and not ending with '-'", EnvDatabase, cfg.Database)
	}
	if cfg.DefaultShards, err = intIn(env(EnvDefaultShards, strconv.Itoa(core.DefaultShards)), EnvDefaultShards, 1, core.MaxShards); err != nil {
		return Config{}, err
	}
	if err := publicFromEnv(env, &cfg); err != nil {
		return Config{}, err
	}
	if err := incrementFromEnv(env, &cfg); err != nil {
		return Config{}, err
	}
	if cfg.Spacing, err = time.ParseDuration(env(EnvWindow, fold.DefaultSpacing.String())); err != nil || cfg.Spacing <= 0 || cfg.Spacing > time.Hour {
		return Config{}, fmt.Errorf("config: %s=%q is not a duration between 1ns and 1h such as 1s", EnvWindow, env(EnvWindow, ""))
	}
	if err := growFromEnv(env, &cfg); err != nil {
		return Config{}, err
	}
	if cfg.ExtensionCounters, err = rollup.ParseExtensionCounters(env(EnvExtension, "")); err != nil {
		return Config{}, fmt.Errorf("config: %s: %w", EnvExtension, err)
	}
	if cfg.ExtensionQuiet, err = time.ParseDuration(env(EnvExtQuiet, rollup.DefaultExtensionQuiet.String())); err != nil || cfg.ExtensionQuiet <= 0 || cfg.ExtensionQuiet > time.Hour {
		return Config{}, fmt.Errorf("config: %s=%q is not a duration between 1ns and 1h such as 10s", EnvExtQuiet, env(EnvExtQuiet, ""))
	}
	cfg.PartsTopic = env(EnvPartsTopic, "")
	if cfg.PartSize, err = intIn(env(EnvPartSize, strconv.Itoa(counter.DefaultPartSize)), EnvPartSize, 1, MaxPartSize); err != nil {
		return Config{}, err
	}
	if cfg.LogLevel, err = cloudlog.ParseLevel(env(EnvLogLevel, "info")); err != nil {
		return Config{}, fmt.Errorf("config: %s: %w", EnvLogLevel, err)
	}
	return cfg, nil
}

// incrementFromEnv reads what only Increment uses: whether it creates
// counters, the largest step, the cache of num_shards, the origins
// answered, how many requests an instance takes at once, and whether a
// quiet document's increments are written into it.
func incrementFromEnv(env func(key, def string) string, cfg *Config) error {
	var err error
	// A public Increment creates no counter unless told to.
	if cfg.AutoCreate, err = strconv.ParseBool(env(EnvAutoCreate, strconv.FormatBool(!cfg.Public))); err != nil {
		return fmt.Errorf("config: %s=%q is not a boolean", EnvAutoCreate, env(EnvAutoCreate, ""))
	}
	step, err := intIn(env(EnvMaxStep, "1000"), EnvMaxStep, 1, MaxStep)
	if err != nil {
		return err
	}
	cfg.MaxStep = int64(step)
	if cfg.CacheTTL, err = time.ParseDuration(env(EnvCacheTTL, adder.DefaultCacheTTL.String())); err != nil || cfg.CacheTTL <= 0 {
		return fmt.Errorf("config: %s=%q is not a positive duration such as 10s", EnvCacheTTL, env(EnvCacheTTL, ""))
	}
	for _, o := range strings.Split(env(EnvCORSOrigins, ""), ",") {
		if o = strings.TrimSpace(o); o != "" {
			cfg.CORSOrigins = append(cfg.CORSOrigins, o)
		}
	}
	if cfg.MaxInFlight, err = intIn(env(EnvMaxInFlight, strconv.Itoa(increment.DefaultMaxInFlight)), EnvMaxInFlight, 1, 100000); err != nil {
		return err
	}
	if cfg.InDocument, err = strconv.ParseBool(env(EnvInDocument, "false")); err != nil {
		return fmt.Errorf("config: %s=%q is not a boolean", EnvInDocument, env(EnvInDocument, ""))
	}
	return nil
}

// validDatabase reports whether id names a Firestore database.
func validDatabase(id string) bool {
	if id == "(default)" {
		return true
	}
	if len(id) < 4 || len(id) > 63 || id[0] < 'a' || id[0] > 'z' || id[len(id)-1] == '-' {
		return false
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

func intIn(s, key string, lo, hi int) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		return 0, fmt.Errorf("config: %s=%q is not an integer in [%d, %d]", key, s, lo, hi)
	}
	return n, nil
}

// growFromEnv reads the auto-grow switch and policy.
func growFromEnv(env func(key, def string) string, cfg *Config) error {
	on, err := strconv.ParseBool(env(EnvAutoGrow, "true"))
	if err != nil {
		return fmt.Errorf("config: %s=%q is not a boolean", EnvAutoGrow, env(EnvAutoGrow, ""))
	}
	def := rollup.DefaultGrow
	per, err := strconv.ParseFloat(env(EnvGrowPerShard, strconv.FormatFloat(def.PerShard, 'g', -1, 64)), 64)
	if err != nil || per <= 0 {
		return fmt.Errorf("config: %s=%q is not a positive number", EnvGrowPerShard, env(EnvGrowPerShard, ""))
	}
	maxShards, err := intIn(env(EnvGrowMax, strconv.Itoa(def.Max)), EnvGrowMax, 1, core.MaxShards)
	if err != nil {
		return err
	}
	period, err := time.ParseDuration(env(EnvGrowPeriod, def.Period.String()))
	if err != nil || period <= 0 {
		return fmt.Errorf("config: %s=%q is not a positive duration such as 500ms", EnvGrowPeriod, env(EnvGrowPeriod, ""))
	}
	quiet, err := time.ParseDuration(env(EnvShrinkAfter, rollup.DefaultQuiet.String()))
	if err != nil || quiet < 0 || quiet > 50*time.Minute {
		return fmt.Errorf("config: %s=%q is not a duration from 0 (never shrink) to 50m, such as 10m", EnvShrinkAfter, env(EnvShrinkAfter, ""))
	}
	if quiet == 0 {
		quiet = -1 // the policy's 0 is its default
	}
	cfg.AutoGrow = on
	cfg.Grow = rollup.GrowPolicy{PerShard: per, Max: maxShards, Period: period, Quiet: quiet}
	return nil
}

// shrinkAfter is the TALLY_SHRINK_AFTER that g stands for: 0 if its
// counters never shrink.
func shrinkAfter(g rollup.GrowPolicy) time.Duration {
	if g.Quiet < 0 {
		return 0
	}
	return cmp.Or(g.Quiet, rollup.DefaultQuiet)
}

// publicFromEnv reads who may call Increment and what they may do.
func publicFromEnv(env func(key, def string) string, cfg *Config) error {
	var err error
	switch cfg.Auth = env(EnvAuth, AuthNone); cfg.Auth {
	case AuthNone, AuthFirebase:
	default:
		return fmt.Errorf("config: %s=%q: want %s or %s", EnvAuth, cfg.Auth, AuthNone, AuthFirebase)
	}
	if cfg.Public, err = strconv.ParseBool(env(EnvPublic, "false")); err != nil {
		return fmt.Errorf("config: %s=%q is not a boolean", EnvPublic, env(EnvPublic, ""))
	}
	if p := env(EnvCounterPat, ""); p != "" {
		if cfg.CounterPattern, err = regexp.Compile("^(?:" + p + ")$"); err != nil {
			return fmt.Errorf("config: %s=%q is not a regular expression: %v", EnvCounterPat, p, err)
		}
	}
	step, err := intIn(env(EnvPublicMaxStep, "1"), EnvPublicMaxStep, 1, MaxStep)
	if err != nil {
		return err
	}
	cfg.PublicMaxStep = int64(step)
	if cfg.IdempotencyTTL, err = time.ParseDuration(env(EnvIdemTTL, "24h")); err != nil || cfg.IdempotencyTTL < time.Minute {
		return fmt.Errorf("config: %s=%q is not a duration of a minute or more such as 24h", EnvIdemTTL, env(EnvIdemTTL, ""))
	}
	if cfg.VotesOnly, err = strconv.ParseBool(env(EnvVotesOnly, "false")); err != nil {
		return fmt.Errorf("config: %s=%q is not a boolean", EnvVotesOnly, env(EnvVotesOnly, ""))
	}
	if cfg.AppCheck, err = strconv.ParseBool(env(EnvAppCheck, "false")); err != nil {
		return fmt.Errorf("config: %s=%q is not a boolean", EnvAppCheck, env(EnvAppCheck, ""))
	}
	return limitsFromEnv(env, cfg)
}

// limitsFromEnv reads the public limits. They count each signed-in user's
// steps, so they are on by default when Increment is public and verifies ID
// tokens, and setting one needs TALLY_AUTH=firebase.
func limitsFromEnv(env func(key, def string) string, cfg *Config) error {
	counterDef, userDef := "off", "off"
	if cfg.Public && cfg.Auth == AuthFirebase {
		counterDef, userDef = DefaultPublicRate, DefaultUserRate
	}
	for _, l := range []struct {
		key, def string
		into     *increment.Rate
	}{{EnvPublicRate, counterDef, &cfg.Limits.Counter}, {EnvUserRate, userDef, &cfg.Limits.User}} {
		r, err := increment.ParseRate(env(l.key, l.def))
		if err != nil {
			return fmt.Errorf("config: %s: %w", l.key, err)
		}
		if r.N > 0 && cfg.Auth != AuthFirebase {
			return fmt.Errorf("config: %s=%s counts each signed-in user's steps: it needs %s=%s", l.key, r, EnvAuth, AuthFirebase)
		}
		*l.into = r
	}
	return nil
}

// Var is one environment variable of the configuration, with the value
// that is in force.
type Var struct {
	Name, Value string
}

// Vars lists every variable of the configuration with its value in force,
// written as it would be set in the environment.
func (c Config) Vars() []Var {
	l := c.Layout.InForce()
	return []Var{
		{EnvProject, c.Project},
		{EnvDatabase, c.Database},
		{EnvCollection, l.Collection},
		{EnvShardField, l.ShardField},
		{EnvCounts, l.Counts},
		{EnvTimeZone, l.TimeZone},
		{EnvShards, l.Shards},
		{EnvVoters, l.Voters},
		{EnvKeys, l.Keys},
		{EnvDefaultShards, strconv.Itoa(c.DefaultShards)},
		{EnvAutoCreate, strconv.FormatBool(c.AutoCreate)},
		{EnvMaxStep, strconv.FormatInt(c.MaxStep, 10)},
		{EnvCORSOrigins, strings.Join(c.CORSOrigins, ",")},
		{EnvCacheTTL, c.CacheTTL.String()},
		{EnvWindow, c.Spacing.String()},
		{EnvAutoGrow, strconv.FormatBool(c.AutoGrow)},
		{EnvGrowPerShard, strconv.FormatFloat(c.Grow.PerShard, 'g', -1, 64)},
		{EnvGrowMax, strconv.Itoa(c.Grow.Max)},
		{EnvGrowPeriod, c.Grow.Period.String()},
		{EnvShrinkAfter, shrinkAfter(c.Grow).String()},
		{EnvLogLevel, cloudlog.LevelName(c.LogLevel)},
		{EnvAuth, c.Auth},
		{EnvPublic, strconv.FormatBool(c.Public)},
		{EnvCounterPat, patternSource(c.CounterPattern)},
		{EnvPublicMaxStep, strconv.FormatInt(c.PublicMaxStep, 10)},
		{EnvIdemTTL, c.IdempotencyTTL.String()},
		{EnvMaxInFlight, strconv.Itoa(c.MaxInFlight)},
		{EnvPublicRate, c.Limits.Counter.String()},
		{EnvUserRate, c.Limits.User.String()},
		{EnvVotesOnly, strconv.FormatBool(c.VotesOnly)},
		{EnvAppCheck, strconv.FormatBool(c.AppCheck)},
		{EnvInDocument, strconv.FormatBool(c.InDocument)},
		{EnvPartsTopic, c.PartsTopic},
		{EnvPartSize, strconv.Itoa(c.PartSize)},
		{EnvExtension, c.ExtensionCounters.String()},
		{EnvExtQuiet, c.ExtensionQuiet.String()},
	}
}

// patternSource is the pattern as it was given.
func patternSource(re *regexp.Regexp) string {
	if re == nil {
		return ""
	}
	return strings.TrimSuffix(strings.TrimPrefix(re.String(), "^(?:"), ")$")
}
