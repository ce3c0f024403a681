package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/internal/testkit/emulatortest"
)

// cli runs the command in this process and returns its output and status.
// It reads this process's environment: tests that give the command an
// environment of its own run it as a child, with cliWith.
func cli(args ...string) (string, int) {
	var out bytes.Buffer
	code := run(args, &out, &out)
	return strings.TrimSpace(out.String()), code
}

func TestHelpAndVersion(t *testing.T) {
	t.Parallel()
	out, code := cli("-h")
	for _, want := range []string{"serve", "bench", "reshard", "config", "completion"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("tally -h: exit %d, no %q:\n%s", code, want, out)
		}
	}
	root := newRoot(&bytes.Buffer{}, &bytes.Buffer{})
	for _, c := range root.Commands() {
		name := strings.Fields(c.Use)[0]
		if out, code := cli(name, "-h"); code != 0 || !strings.Contains(out, "Usage:") {
			t.Errorf("tally %s -h: exit %d:\n%s", name, code, out)
		}
		if out, code := cli(name, "--version"); code != 0 || !strings.HasPrefix(out, "tally ") {
			t.Errorf("tally %s --version: exit %d: %s", name, code, out)
		}
	}
	if out, _ := cli("get", "-h"); strings.Contains(out, "cache-ttl") || strings.Contains(out, "--shards ") {
		t.Errorf("get -h lists another command's flags:\n%s", out)
	}
	if out, code := cli("reconsile", "likes"); code != 2 || !strings.Contains(out, "reconcile") {
		t.Errorf("a misspelt command: exit %d, %q; want exit 2 suggesting reconcile", code, out)
	}
	if out, code := cli("get", "--no-such-flag", "likes"); code != 2 || !strings.Contains(out, "no-such-flag") {
		t.Errorf("an unknown flag: exit %d, %q; want exit 2", code, out)
	}
	for _, shell := range []string{"bash", "zsh", "fish"} {
		if out, code := cli("completion", shell); code != 0 || !strings.Contains(out, "tally") {
			t.Errorf("completion %s: exit %d", shell, code)
		}
	}
}

// ownEmulator gives the test a project of its own in the package's shared
// emulator, and returns a client of it and a function that runs a command
// against it with the variable given set.
func ownEmulator(t *testing.T, variable string) (*firestore.Client, func(args ...string) (string, int)) {
	t.Helper()
	host, project := emulatorHost(t)
	env := []string{"FIRESTORE_EMULATOR_HOST=" + host, "GOOGLE_CLOUD_PROJECT=" + project, variable}
	return emulatortest.ClientAt(t, host, project), func(args ...string) (string, int) { return cliWith(t, env, args...) }
}

func TestConfigCommand(t *testing.T) {
	t.Parallel()
	env := []string{"TALLY_ROLLUP_WINDOW=250ms"}
	cli := func(args ...string) (string, int) { return cliWith(t, env, args...) }
	out, code := cli("config", "--shard-field", "Count")
	for _, want := range []string{"TALLY_ROLLUP_WINDOW=250ms", "# environment", "TALLY_SHARD_FIELD=Count", "# flag --shard-field",
		"TALLY_COLLECTION=counters", "# default", "FIRESTORE_EMULATOR_HOST="} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("tally config: exit %d, no %q:\n%s", code, want, out)
		}
	}
	out, _ = cli("config", "--json")
	var v map[string]string
	if err := json.Unmarshal([]byte(out), &v); err != nil || v["TALLY_ROLLUP_WINDOW"] != "250ms" {
		t.Errorf("config --json: %q", out)
	}
	if out, code := cli("config", "--check"); code != 0 || out != "" {
		t.Errorf("config --check of a good configuration: exit %d, %q", code, out)
	}
	env = append(env, "TALLY_MAX_STEP=abc")
	for _, args := range [][]string{{"config", "--check"}, {"config"}, {"get", "likes"}} {
		if out, code := cli(args...); code != 2 || !strings.Contains(out, "TALLY_MAX_STEP") {
			t.Errorf("tally %s with TALLY_MAX_STEP=abc: exit %d, %q; want exit 2 naming it", strings.Join(args, " "), code, out)
		}
	}
}

// TestNoCredentialsExplained: with neither an emulator nor credentials, a
// command says how to point it at the emulator.
func TestNoCredentialsExplained(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	_, stderr, code := tallyOut(t, []string{"HOME=" + home, "GOOGLE_APPLICATION_CREDENTIALS=", "CLOUDSDK_CONFIG=" + home},
		"get", "likes", "--project", "p")
	if code != 1 || !strings.Contains(stderr, "FIRESTORE_EMULATOR_HOST") || !strings.Contains(stderr, "application-default login") {
		t.Errorf("exit %d, %q; want how to use the emulator or log in", code, stderr)
	}
}

// TestBenchUsage: bench refuses flags its runner would not read, and an
// emulator it cannot reach events from, as a wrong call (exit 2), before
// it starts anything.
func TestBenchUsage(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", "--windows", "--aggregate"}, "--windows takes none of --fields, --shards, --burst, --url, --listeners, --contention and --aggregate"},
		{[]string{"bench", "--windows", "--shards", "4"}, "--windows takes none of"},
		{[]string{"bench", "--aggregate", "--listeners"}, "--aggregate takes none of --fields, --shards, --burst, --url, --listeners and --contention"},
		{[]string{"bench", "--emulator", "127.0.0.1:1"}, "--emulator needs --bridge-port"},
	} {
		if out, code := cli(c.args...); code != 2 || !strings.Contains(out, c.want) || !strings.Contains(out, "tally bench -h") {
			t.Errorf("tally %s: exit %d, %q; want exit 2, %q and the way to the usage", strings.Join(c.args, " "), code, out, c.want)
		}
	}
}
