package setup

import (
	"log/slog"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/rollup"
)

func TestConfigFromEnv(t *testing.T) {
	tests := []struct {
		name  string
		env   map[string]string
		check func(Config) bool
		bad   bool
	}{
		{name: "defaults", env: nil, check: func(c Config) bool {
			return c.Database == "(default)" && core.MustParse(c.Layout).Collection == "counters" && core.MustParse(c.Layout).ShardField == "count" &&
				c.DefaultShards == 1 && c.AutoCreate && c.MaxStep == 1000 && c.CORSOrigins == nil &&
				c.CacheTTL == 10*time.Second && c.LogLevel == slog.LevelInfo && c.Project == "" && c.Spacing == time.Second &&
				c.AutoGrow && c.Grow == rollup.DefaultGrow && c.MaxInFlight == 100
		}},
		{name: "all set", env: map[string]string{
			EnvProject: "p", EnvDatabase: "db-2", EnvCollection: "tallies", EnvShardField: "Count",
			EnvDefaultShards: "4", EnvAutoCreate: "false", EnvMaxStep: "5", EnvCORSOrigins: " https://a.example, https://b.example ,",
			EnvCacheTTL: "2s", EnvLogLevel: "debug", EnvWindow: "250ms", EnvAutoGrow: "false",
		}, check: func(c Config) bool {
			return c.Project == "p" && c.Database == "db-2" && core.MustParse(c.Layout).Collection == "tallies" && core.MustParse(c.Layout).ShardField == "Count" &&
				c.DefaultShards == 4 && !c.AutoCreate && c.MaxStep == 5 &&
				slices.Equal(c.CORSOrigins, []string{"https://a.example", "https://b.example"}) &&
				c.CacheTTL == 2*time.Second && c.LogLevel == slog.LevelDebug && c.Spacing == 250*time.Millisecond && !c.AutoGrow
		}},
		{name: "shards zero", env: map[string]string{EnvDefaultShards: "0"}, bad: true},
		{name: "shards not a number", env: map[string]string{EnvDefaultShards: "ten"}, bad: true},
		{name: "shards too many", env: map[string]string{EnvDefaultShards: "10001"}, bad: true},
		{name: "auto-create", env: map[string]string{EnvAutoCreate: "maybe"}, bad: true},
		{name: "max step", env: map[string]string{EnvMaxStep: "-1"}, bad: true},
		{name: "max step past its bound", env: map[string]string{EnvMaxStep: "1000001"}, bad: true},
		{name: "max step at its bound", env: map[string]string{EnvMaxStep: "1000000"}, check: func(c Config) bool { return c.MaxStep == MaxStep }},
		{name: "ttl", env: map[string]string{EnvCacheTTL: "10"}, bad: true},
		{name: "ttl negative", env: map[string]string{EnvCacheTTL: "-1s"}, bad: true},
		{name: "grow policy", env: map[string]string{EnvGrowPerShard: "2.5", EnvGrowMax: "40", EnvGrowPeriod: "30s"}, check: func(c Config) bool {
			return c.Grow == rollup.GrowPolicy{PerShard: 2.5, Max: 40, Period: 30 * time.Second, Quiet: rollup.DefaultQuiet}
		}},
		{name: "shrink after", env: map[string]string{EnvShrinkAfter: "2m"}, check: func(c Config) bool { return c.Grow.Quiet == 2*time.Minute }},
		{name: "never shrink", env: map[string]string{EnvShrinkAfter: "0"}, check: func(c Config) bool { return c.Grow.Quiet < 0 }},
		{name: "shrink after past an hour's versions", env: map[string]string{EnvShrinkAfter: "2h"}, bad: true},
		{name: "shrink after negative", env: map[string]string{EnvShrinkAfter: "-1m"}, bad: true},
		{name: "grow switch", env: map[string]string{EnvAutoGrow: "sometimes"}, bad: true},
		{name: "grow rate", env: map[string]string{EnvGrowPerShard: "0"}, bad: true},
		{name: "grow max", env: map[string]string{EnvGrowMax: "0"}, bad: true},
		{name: "window", env: map[string]string{EnvWindow: "soon"}, bad: true},
		{name: "window without a unit", env: map[string]string{EnvWindow: "5"}, bad: true},
		{name: "window zero", env: map[string]string{EnvWindow: "0s"}, bad: true},
		{name: "log level", env: map[string]string{EnvLogLevel: "loud"}, bad: true},
		{name: "in flight", env: map[string]string{EnvMaxInFlight: "8"}, check: func(c Config) bool { return c.MaxInFlight == 8 }},
		{name: "in flight zero", env: map[string]string{EnvMaxInFlight: "0"}, bad: true},
		{name: "parts", env: map[string]string{EnvPartsTopic: "tally-parts", EnvPartSize: "500"}, check: func(c Config) bool { return c.PartsTopic == "tally-parts" && c.PartSize == 500 }},
		{name: "parts by default", env: map[string]string{}, check: func(c Config) bool { return c.PartsTopic == "" && c.PartSize == 1000 }},
		{name: "part size zero", env: map[string]string{EnvPartSize: "0"}, bad: true},
		{name: "part size too big", env: map[string]string{EnvPartSize: "10001"}, bad: true},
		{name: "collection with slash", env: map[string]string{EnvCollection: "a/b"}, bad: true},
		{name: "field with dot", env: map[string]string{EnvShardField: "a.b"}, bad: true},
		{name: "database", env: map[string]string{EnvDatabase: "Tallies!"}, bad: true},
		{name: "database too short", env: map[string]string{EnvDatabase: "db"}, bad: true},
		{name: "named database", env: map[string]string{EnvDatabase: "tallies-eu"}, check: func(c Config) bool { return c.Database == "tallies-eu" }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := ConfigFromEnv(func(k string) string { return tc.env[k] })
			if tc.bad {
				if err == nil {
					t.Errorf("ConfigFromEnv(%v) = %+v, want an error", tc.env, cfg)
				}
				return
			}
			if err != nil || !tc.check(cfg) {
				t.Errorf("ConfigFromEnv(%v) = %+v, %v", tc.env, cfg, err)
			}
		})
	}
}

// TestVarsReadBack: every variable Vars prints reads back, through
// ConfigFromEnv, as the same configuration.
func TestVarsReadBack(t *testing.T) {
	env := map[string]string{EnvProject: "p", EnvShardField: "Count", EnvCORSOrigins: "https://a.example,https://b.example",
		EnvAutoGrow: "false", EnvWindow: "250ms", EnvLogLevel: "warning", EnvGrowPerShard: "2.5"}
	cfg, err := ConfigFromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	back := map[string]string{}
	for _, v := range cfg.Vars() {
		back[v.Name] = v.Value
	}
	again, err := ConfigFromEnv(func(k string) string { return back[k] })
	if err != nil || !reflect.DeepEqual(again, cfg) {
		t.Errorf("read back %+v, %v; want %+v", again, err, cfg)
	}
}
