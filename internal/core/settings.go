package core

import (
	"fmt"
	"strings"

	"github.com/tallycounters/tally/internal/core/calendar"
)

// The settings of a Layout, as the functions read them from their
// environment (LayoutFromEnv).
const (
	EnvCollection = "TALLY_COLLECTION"        // default "counters"
	EnvShardField = "TALLY_SHARD_FIELD"       // default "count"
	EnvCounts     = "TALLY_COUNTS"            // counts on the app's documents: "posts:likes,views;users/*/posts:likes"
	EnvTimeZone   = "TALLY_TIME_ZONE"         // the time zone of windows' buckets, an IANA name; default UTC
	EnvShards     = "TALLY_SHARDS_COLLECTION" // subcollection of shards under each counted document; default "shards"
	EnvVoters     = "TALLY_VOTERS_COLLECTION" // default "voters"
	EnvKeys       = "TALLY_KEYS_COLLECTION"   // default "keys"
)

// Settings reads settings through getenv: a setting's value, trimmed, or
// def where it is unset or blank.
func Settings(getenv func(string) string) func(key, def string) string {
	return func(key, def string) string {
		if v := strings.TrimSpace(getenv(key)); v != "" {
			return v
		}
		return def
	}
}

// LayoutFromEnv reads where the counters are, and what they count,
// through getenv: the collection, the shard field, the counts declared,
// the time zone of their windows, and the names of tally's
// subcollections. The first bad value is the error, which names its
// setting.
func LayoutFromEnv(getenv func(string) string) (Layout, error) {
	env := Settings(getenv)
	l := Layout{Collection: env(EnvCollection, DefaultCollection), ShardField: env(EnvShardField, DefaultShardField)}
	if err := ValidName(l.Collection); err != nil {
		return Layout{}, fmt.Errorf("%s=%q: %w", EnvCollection, l.Collection, err)
	}
	if err := l.Validate(); err != nil {
		return Layout{}, fmt.Errorf("%s=%q: %w", EnvShardField, l.ShardField, err)
	}
	var err error
	if l.Docs, err = ParseCounts(env(EnvCounts, "")); err != nil {
		return Layout{}, fmt.Errorf("%s: %w", EnvCounts, err)
	}
	if err := guideWindows(&l); err != nil {
		return Layout{}, fmt.Errorf("%s: %w", EnvCounts, err)
	}
	if l.Zone, err = calendar.Zone(env(EnvTimeZone, "UTC")); err != nil {
		return Layout{}, fmt.Errorf("%s=%q: %w", EnvTimeZone, env(EnvTimeZone, ""), err)
	}
	l.ShardsName = env(EnvShards, ShardsCollection)
	l.VotersName = env(EnvVoters, VotersCollection)
	l.KeysName = env(EnvKeys, KeysCollection)
	if err := l.Validate(); err != nil {
		return Layout{}, fmt.Errorf("%s, %s, %s, %s: %w", EnvCounts, EnvShards, EnvVoters, EnvKeys, err)
	}
	return l, nil
}

// guideWindows takes, from TALLY_COUNTS, the windows of the guide layout's
// counters (counters:today=total per day), which keep the guide layout:
// an entry of windows of the total alone, on the collection of counters.
func guideWindows(l *Layout) error {
	if len(l.Docs) != 1 || !GuideWindows(l.Docs[0]) {
		for _, d := range l.Docs {
			if GuideWindows(d) {
				return fmt.Errorf("windows of %s's total are of the guide layout, whose counters are %s/{id}: "+
					"declare them alone, as %s:today=total per day", d.Collection, l.Collection, l.Collection)
			}
		}
		return nil
	}
	if l.Docs[0].Collection != l.Collection {
		return fmt.Errorf("windows of %s's total: the counters are %s/{id} (%s); declare them on %s", l.Docs[0].Collection, l.Collection, EnvCollection, l.Collection)
	}
	l.Windows, l.Docs = l.Docs[0].Windows, nil
	return nil
}
