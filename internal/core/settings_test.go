package core

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tallycounters/tally/layout"
)

// TestSettingsReadBack: a Layout's settings (Settings) read as the same
// Layout, for every kind of declaration, and are the settings in force,
// so that reading them again changes nothing.
func TestSettingsReadBack(t *testing.T) {
	for _, s := range []layout.Layout{
		{},
		{Collection: "tallies", ShardField: "n", Shards: "s", Voters: "v", Keys: "k"},
		{Collection: "tallies", Counts: "tallies:today=total per day keep 3", TimeZone: "Europe/Paris"},
		{Counts: "posts:likes,views,rank(likes),hot=trend(likes, 6h),likes_d=likes per day;" +
			"users:points=sum(games.points where mode == \"solo\"),best=max(games.points),rank(best);users/*/posts:likes"},
		{Counts: "posts:likes,likes_h=likes per hour", Zone: time.FixedZone("Tally/Own", 5*3600+1800)}, // no zone database holds it
	} {
		l, err := Parse(s)
		if err != nil {
			t.Fatalf("%+v: %v", s, err)
		}
		in := l.Settings()
		again, err := Parse(in)
		if err != nil {
			t.Fatalf("%+v, read back: %v", in, err)
		}
		if !reflect.DeepEqual(again.Docs, l.Docs) || !reflect.DeepEqual(again.Windows, l.Windows) ||
			again.Zone.String() != l.Zone.String() || again.Collection != l.Collection || again.ShardField != l.ShardField {
			t.Errorf("%+v read back from %+v as another layout", s, in)
		}
		if again.Settings() != in {
			t.Errorf("%+v: settings %+v, then %+v", s, in, again.Settings())
		}
		for _, got := range []string{in.Collection, in.ShardField, in.TimeZone, in.Shards, in.Voters, in.Keys} {
			if got == "" {
				t.Errorf("%+v: a setting not in force in %+v", s, in)
			}
		}
	}
}

// TestParseNamesTheSetting: a bad setting is an error naming it, from
// Parse, and a panic naming it from MustParse.
func TestParseNamesTheSetting(t *testing.T) {
	for setting, s := range map[string]layout.Layout{
		layout.EnvCollection: {Collection: "a/b"},
		layout.EnvCounts:     {Counts: "posts:likes=count(("},
		layout.EnvTimeZone:   {TimeZone: "Mars/Olympus"},
		layout.EnvVoters:     {Voters: "shards"},
	} {
		if _, err := Parse(s); err == nil || !strings.Contains(err.Error(), setting) {
			t.Errorf("%+v: %v, want an error naming %s", s, err, setting)
		}
		func() {
			defer func() {
				if p := recover(); p == nil || !strings.Contains(p.(string), setting) {
					t.Errorf("MustParse(%+v) panicked with %v, want %s named", s, p, setting)
				}
			}()
			MustParse(s)
		}()
	}
}
