package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"slices"
	"strings"
	"testing"

	"github.com/tallycounters/tally/internal/emulator"
	"github.com/tallycounters/tally/internal/emulatortest"
)

func TestParseInterspersed(t *testing.T) {
	tests := []struct {
		args   []string
		pos    []string
		shards int
		json   bool
	}{
		{[]string{"likes", "--shards", "8"}, []string{"likes"}, 8, false},
		{[]string{"--shards", "8", "likes"}, []string{"likes"}, 8, false},
		{[]string{"--json", "likes", "--shards=3"}, []string{"likes"}, 3, true},
		{[]string{"likes"}, []string{"likes"}, 10, false},
		{[]string{"a", "b", "--json"}, []string{"a", "b"}, 10, true},
		{[]string{"--", "-odd"}, []string{"-odd"}, 10, false},
		{nil, nil, 10, false},
	}
	for _, tc := range tests {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		shards := fs.Int("shards", 10, "")
		js := fs.Bool("json", false, "")
		pos, err := parseInterspersed(fs, tc.args)
		if err != nil || !slices.Equal(pos, tc.pos) || *shards != tc.shards || *js != tc.json {
			t.Errorf("%q: %q shards=%d json=%v err=%v; want %q %d %v", tc.args, pos, *shards, *js, err, tc.pos, tc.shards, tc.json)
		}
	}
}

// TestCounterCommands runs a CLI session against an emulator: create, incr,
// sum, reshard, reconcile, get, delete, in text and JSON.
func TestCounterCommands(t *testing.T) {
	e, err := emulatortest.Start(emulator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Stop()
	t.Setenv("FIRESTORE_EMULATOR_HOST", e.Host())
	t.Setenv("GOOGLE_CLOUD_PROJECT", "")
	tally := func(args ...string) (string, int) {
		var out bytes.Buffer
		code := run(args, &out, &out)
		return strings.TrimSpace(out.String()), code
	}
	steps := []struct {
		args []string
		want string // the output contains it
		code int
	}{
		{[]string{"create", "likes", "--shards", "4"}, "created likes with 4 shards", 0},
		{[]string{"create", "--shards", "4", "likes"}, "already exists", 1},
		{[]string{"incr", "likes", "--by", "5"}, "likes +5", 0},
		{[]string{"incr", "--by=-2", "likes"}, "likes -2", 0},
		{[]string{"sum", "likes"}, "likes 3", 0},
		{[]string{"get", "likes"}, "likes 0", 0}, // no rollup runs here
		{[]string{"reconcile", "likes"}, "likes: total 0, shards 3, drift -3, repaired", 0},
		{[]string{"get", "--json", "likes"}, `{"counter":"likes","total":3}`, 0},
		{[]string{"reshard", "likes", "--shards", "2", "--cache-ttl", "1ms"}, "likes: 4 -> 2 shards", 0},
		{[]string{"sum", "likes", "--json"}, `{"counter":"likes","sum":3}`, 0},
		{[]string{"reconcile", "--all", "--json"}, `"drift":0`, 0},
		{[]string{"reset", "likes"}, "shards set to 0", 0},
		{[]string{"sum", "likes"}, "likes 0", 0},
		{[]string{"delete", "likes"}, "deleted likes", 0},
		{[]string{"get", "likes"}, "does not exist", 1},
		{[]string{"incr", "bad/id"}, "invalid counter id", 1},
		{[]string{"get"}, "want one counter id", 2},
		{[]string{"reshard", "likes"}, "--shards is required", 1},
		{[]string{"reconcile"}, "give a counter id, or --all", 1},
	}
	for _, s := range steps {
		out, code := tally(s.args...)
		if code != s.code || !strings.Contains(out, s.want) {
			t.Errorf("tally %s: exit %d, %q; want exit %d and %q", strings.Join(s.args, " "), code, out, s.code, s.want)
		}
	}
	out, _ := tally("create", "x", "--json")
	var v map[string]any
	if err := json.Unmarshal([]byte(out), &v); err != nil || v["counter"] != "x" {
		t.Errorf("--json output %q is not the counter as JSON", out)
	}
}
