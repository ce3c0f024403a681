package main

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/tallycounters/tally/internal/emulator"
	"github.com/tallycounters/tally/internal/emulatortest"
)

// TestGuideSampleCounter: a counter as the Go code of Google's
// distributed-counter guide makes it (ten shards with a Count field, and
// no parent document) is a counter to every command, with
// TALLY_SHARD_FIELD=Count: get and sum read its shards' sum, incr adds to
// it, reconcile makes its parent with the exact total, and reshard, reset
// and delete act on it.
func TestGuideSampleCounter(t *testing.T) {
	t.Parallel()
	emulatortest.Require(t)
	e, err := emulatortest.Start(emulator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Stop()
	fs := emulatortest.ClientAt(t, e.Host(), "demo-sample")
	ctx := context.Background()
	for i := range 10 {
		if _, err := fs.Doc("counters/gosample/shards/"+strconv.Itoa(i)).Set(ctx, map[string]any{"Count": int64(i % 4)}); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{"FIRESTORE_EMULATOR_HOST=" + e.Host(), "GOOGLE_CLOUD_PROJECT=demo-sample", "TALLY_SHARD_FIELD=Count"}
	for _, step := range []struct {
		args []string
		want string
	}{
		{[]string{"sum", "gosample"}, "gosample 13 (sum of the shards)"},
		{[]string{"get", "gosample"}, "gosample 13"},
		{[]string{"incr", "gosample", "--by", "3"}, "gosample +3"},
		{[]string{"sum", "gosample"}, "gosample 16"},
		{[]string{"reconcile", "gosample"}, "gosample: total 0, shards 16, drift -16, repaired"},
		{[]string{"get", "gosample"}, "gosample 16"},
		{[]string{"reshard", "gosample", "--shards", "2", "--cache-ttl", "0s"}, "gosample: 10 -> 2 shards"},
		{[]string{"sum", "gosample"}, "gosample 16"},
		{[]string{"reset", "gosample"}, "gosample: shards set to 0, total folded"},
		{[]string{"get", "gosample"}, "gosample 0"},
		{[]string{"delete", "gosample"}, "deleted gosample"},
		{[]string{"get", "gosample"}, "there is no counter gosample"},
	} {
		out, code := cliWith(t, env, step.args...)
		if !strings.Contains(out, step.want) {
			t.Fatalf("tally %s: exit %d\n%s\nwant %q", strings.Join(step.args, " "), code, out, step.want)
		}
	}
}
