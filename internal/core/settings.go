package core

import (
	"fmt"
	"strings"

	"github.com/tallycounters/tally/internal/core/calendar"
	"github.com/tallycounters/tally/layout"
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
// through getenv (layout.FromEnv), as Parse does.
func LayoutFromEnv(getenv func(string) string) (Layout, error) {
	return Parse(layout.FromEnv(getenv))
}

// Parse reads the Layout that settings give: the collection, the shard
// field, the counts declared, the time zone of their windows, and the
// names of tally's subcollections. The first bad value is the error,
// which names its setting.
func Parse(settings layout.Layout) (Layout, error) {
	s := settings.InForce()
	l := Layout{Collection: s.Collection, ShardField: s.ShardField}
	if err := ValidName(l.Collection); err != nil {
		return Layout{}, fmt.Errorf("%s=%q: %w", layout.EnvCollection, l.Collection, err)
	}
	if err := l.Validate(); err != nil {
		return Layout{}, fmt.Errorf("%s=%q: %w", layout.EnvShardField, l.ShardField, err)
	}
	var err error
	if l.Docs, err = ParseCounts(s.Counts); err != nil {
		return Layout{}, fmt.Errorf("%s: %w", layout.EnvCounts, err)
	}
	if err := guideWindows(&l); err != nil {
		return Layout{}, fmt.Errorf("%s: %w", layout.EnvCounts, err)
	}
	if l.Zone = s.Zone; l.Zone == nil {
		if l.Zone, err = calendar.Zone(s.TimeZone); err != nil {
			return Layout{}, fmt.Errorf("%s=%q: %w", layout.EnvTimeZone, settings.TimeZone, err)
		}
	}
	l.ShardsName, l.VotersName, l.KeysName = s.Shards, s.Voters, s.Keys
	if err := l.Validate(); err != nil {
		return Layout{}, fmt.Errorf("%s, %s, %s, %s: %w", layout.EnvCounts, layout.EnvShards, layout.EnvVoters, layout.EnvKeys, err)
	}
	return l, nil
}

// MustParse is the Layout settings give; it panics where they do not
// read, for the constructors whose Layout the code that calls them built
// (a Layout read from the environment was read by Parse, with an error).
func MustParse(settings layout.Layout) Layout {
	l, err := Parse(settings)
	if err != nil {
		panic("tally: a Layout that does not read: " + err.Error())
	}
	return l
}

// Settings is l as the settings that give it, each in force, with its
// zone itself (layout.Layout.Zone): Parse reads l from them.
func (l Layout) Settings() layout.Layout {
	counts := FormatCounts(l.Docs)
	if len(l.Windows) > 0 {
		counts = FormatCounts([]Declaration{{Collection: l.Collection, Windows: l.Windows}})
	}
	shards, voters, keys := l.Subcollections()
	return layout.Layout{Collection: l.Collection, ShardField: l.ShardField,
		Counts: counts, Shards: shards, Voters: voters, Keys: keys, Zone: l.Zone}.InForce()
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
		return fmt.Errorf("windows of %s's total: the counters are %s/{id} (%s); declare them on %s", l.Docs[0].Collection, l.Collection, layout.EnvCollection, l.Collection)
	}
	l.Windows, l.Docs = l.Docs[0].Windows, nil
	return nil
}
