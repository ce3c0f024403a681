package layout

import (
	"testing"
	"time"
)

// TestFromEnv: each setting is read from its variable, trimmed; an unset
// one stays empty, and takes its default in force.
func TestFromEnv(t *testing.T) {
	env := map[string]string{EnvCollection: " tallies ", EnvCounts: "posts:likes\n", EnvTimeZone: "Europe/Paris", EnvKeys: "  "}
	got := FromEnv(func(k string) string { return env[k] })
	want := Layout{Collection: "tallies", Counts: "posts:likes", TimeZone: "Europe/Paris"}
	if got != want {
		t.Errorf("FromEnv = %+v, want %+v", got, want)
	}
	in := got.InForce()
	want = Layout{Collection: "tallies", ShardField: "count", Counts: "posts:likes", TimeZone: "Europe/Paris",
		Shards: "shards", Voters: "voters", Keys: "keys"}
	if in != want {
		t.Errorf("InForce = %+v, want %+v", in, want)
	}
	if got := (Layout{Zone: time.FixedZone("Tally/Own", 3600)}).InForce().TimeZone; got != "Tally/Own" {
		t.Errorf("a zone of its own in force is named %q, want its name", got)
	}
	if (Layout{}).InForce().Counts != "" {
		t.Error("the zero Layout declares counts in force; want the guide layout's none")
	}
}
