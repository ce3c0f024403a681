package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/testkit/testio"
	"github.com/tallycounters/tally/internal/tools/bench"
	"github.com/tallycounters/tally/internal/tools/bench/report"
	"github.com/tallycounters/tally/internal/tools/stack"
	"github.com/tallycounters/tally/setup"
)

// readme returns what follows the README's marker <!-- README test: name -->:
// the fenced block, or the table or paragraph, up to the next blank line.
func readme(t *testing.T, name string) string {
	t.Helper()
	s := readmeText(t)
	marker := "<!-- README test: " + name + " -->\n"
	i := strings.Index(s, marker)
	if i < 0 {
		t.Fatalf("the README has no %q", marker)
	}
	s = s[i+len(marker):]
	if rest, ok := strings.CutPrefix(s, "```"); ok {
		rest = rest[strings.Index(rest, "\n")+1:]
		return rest[:strings.Index(rest, "```")]
	}
	if j := strings.Index(s, "\n\n"); j >= 0 {
		s = s[:j]
	}
	return s
}

// normalize hides what differs from run to run: ports, process ids,
// durations, shard numbers, timestamps.
func normalize(s string) string {
	for _, r := range []struct{ re, to string }{
		{`127\.0\.0\.1:\d+`, "127.0.0.1:PORT"},
		{`localhost:\d+`, "localhost:PORT"},
		{`pid \d+`, "pid PID"},
		{`"shard":\d+`, `"shard":N`},
		{`"\d{4}-\d\d-\d\dT[0-9:.]+Z"`, `"TIME"`},
		{`\b\d{4}-\d\d-\d\dT[0-9:.]+Z\b`, "TIME"},
		{`\b\d+(\.\d+)?(ms|s)\b`, "DURATION"},
		// A rank reads 2 or 3 documents, and with --fresh as many more as
		// a fold of the board takes where it must fold it first.
		{`\b\d+ reads\b`, "N reads"},
		// A reshard starts from the shards the counter has then: Rollup
		// may have grown a busy one, more readily on a loaded machine.
		{`(?m)^(\w+: )\d+ -> (\d+ shards)$`, "${1}N -> ${2}"},
	} {
		s = regexp.MustCompile(r.re).ReplaceAllString(s, r.to)
	}
	return strings.TrimSpace(s)
}

// session is a README block of commands ("$ ...") and their output.
type step struct {
	command string
	output  string
}

func session(block string) []step {
	var steps []step
	for _, line := range strings.Split(block, "\n") {
		if cmd, ok := strings.CutPrefix(line, "$ "); ok {
			steps = append(steps, step{command: cmd})
		} else if len(steps) > 0 && line != "" {
			steps[len(steps)-1].output += line + "\n"
		}
	}
	return steps
}

// stepRunner runs one step of a README session against a serve whose
// functions and emulator are at the addresses given: the README's are the
// defaults. A tally command runs as a child, with env.
func stepRunner(t *testing.T, env []string, functionsAddr, emulatorAddr string) func(step) string {
	return func(s step) string {
		args, ok := strings.CutPrefix(s.command, "go run ./cmd/tally ") // as a new user runs it, from a clone
		if !ok {
			args, ok = strings.CutPrefix(s.command, "tally ")
		}
		if ok {
			out, _ := cliWith(t, env, strings.Fields(args)...) // the README's tally commands quote nothing
			return out
		}
		line := strings.ReplaceAll(s.command, "127.0.0.1:8080", functionsAddr)
		line = strings.ReplaceAll(line, "127.0.0.1:41235", emulatorAddr)
		b, _ := exec.Command("bash", "-c", line).CombinedOutput()
		return string(b)
	}
}

// docPages are the README, the pages of docs/ and the web client's own,
// which the README tests keep true alike.
func docPages(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	web := []string{"../../clients/web/README.md", "../../clients/web/CHANGELOG.md"}
	return append(append([]string{"../../README.md"}, pages...), web...)
}

// readmeText is the whole README, and every page of docs/ after it.
func readmeText(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	for _, p := range docPages(t) {
		b.WriteString(testio.Text(t, p) + "\n")
	}
	return b.String()
}

// waitFolded waits, on the emulator at host, until the rollup holds no
// event that could still write the counter's parent: its total is the
// sum of the shards, and its as_of covers their last write. Events of
// writes as_of covers are answered with no write. Only for shards that
// were written, none deleted: the emulator dates a delete's event when it
// sends it, seconds later under load, and a delete leaves no update time
// to wait for. At most emulatortest.Liveness: a liveness wait, not a
// measurement.
func waitFolded(t *testing.T, host, id string) {
	t.Helper()
	fs := emulatortest.ClientAt(t, host, stack.DefaultProject)
	l := core.Default()
	ctx := context.Background()
	for deadline := time.Now().Add(emulatortest.Liveness); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		parent, err := l.Counter(fs, id).Get(ctx)
		if err != nil {
			t.Fatal(err)
		}
		shards, err := l.Shards(fs, id, "").Documents(ctx).GetAll()
		if err != nil {
			t.Fatal(err)
		}
		var sum int64
		var written time.Time
		for _, s := range shards {
			n, _ := s.Data()[l.ShardField].(int64)
			sum += n
			if s.UpdateTime.After(written) {
				written = s.UpdateTime
			}
		}
		total, _ := parent.Data()[core.FieldTotal].(int64)
		if total == sum && !l.AsOf(parent.Data()).Before(written) {
			return
		}
	}
	t.Fatalf("the rollup had not folded the last writes to %s after a minute", id)
}

// TestReadmeCommands checks the README's table of commands, and the flags
// it names, against the command itself.
func TestReadmeCommands(t *testing.T) {
	t.Parallel()
	root := newRoot(&bytes.Buffer{}, &bytes.Buffer{})
	var have []string
	for _, c := range root.Commands() {
		have = append(have, c.Name())
	}
	table := readme(t, "commands")
	var listed []string
	for _, m := range regexp.MustCompile("`tally ([a-z]+)([^`]*)`").FindAllStringSubmatch(table, -1) {
		if !slices.Contains(listed, m[1]) {
			listed = append(listed, m[1])
		}
		c, _, err := root.Find([]string{m[1]})
		if err != nil {
			t.Errorf("the README lists tally %s, which does not exist", m[1])
			continue
		}
		if words := strings.Fields(m[2]); len(words) > 0 {
			if sub, _, err := c.Find(words[:1]); err == nil && sub != c {
				c = sub // tally extension takeover: the flags are the subcommand's
			}
		}
		for _, f := range regexp.MustCompile(`--([a-z-]+)`).FindAllStringSubmatch(m[2], -1) {
			if c.Flags().Lookup(f[1]) == nil {
				t.Errorf("the README gives tally %s --%s, which it does not take", m[1], f[1])
			}
		}
	}
	slices.Sort(have)
	slices.Sort(listed)
	if !slices.Equal(have, listed) {
		t.Errorf("the README's table lists %v; tally has %v", listed, have)
	}
	for name, block := range map[string]string{"serve": readme(t, "serve flags"), "bench": readme(t, "bench flags")} {
		c, _, _ := root.Find([]string{name})
		for _, f := range regexp.MustCompile("`(--?)([a-z_-]+)").FindAllStringSubmatch(block, -1) {
			if strings.Contains(f[2], "_") {
				continue // the emulator's own --functions_emulator
			}
			found := f[1] == "--" && c.Flags().Lookup(f[2]) != nil || f[1] == "-" && len(f[2]) == 1 && c.Flags().ShorthandLookup(f[2]) != nil
			if !found {
				t.Errorf("the README gives tally %s %s%s, which it does not take", name, f[1], f[2])
			}
		}
	}
	serve, _, _ := root.Find([]string{"serve"})
	if p := serve.Flags().Lookup("port"); os.Getenv("PORT") == "" && p.DefValue != "8080" {
		t.Errorf("serve's default port is %s; the README says 8080", p.DefValue)
	}
}

// TestReadmeConfiguration: the README's table of variables is the one the
// configuration reads.
func TestReadmeConfiguration(t *testing.T) {
	t.Parallel()
	cfg, err := setup.ConfigFromEnv(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, v := range cfg.Vars() {
		want = append(want, v.Name)
	}
	var listed []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([A-Z_]+)`").FindAllStringSubmatch(readme(t, "configuration"), -1) {
		listed = append(listed, m[1])
	}
	slices.Sort(want)
	slices.Sort(listed)
	if !slices.Equal(want, listed) {
		t.Errorf("the README's table lists %v; the configuration reads %v", listed, want)
	}
}

// TestReadmeGoExample: the README's Go code is ExampleClient_lifecycle,
// which go test runs.
func TestReadmeGoExample(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("../../counter/example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(src), readme(t, "go example")) {
		t.Error("the README's Go example is not the body of counter.ExampleClient_lifecycle")
	}
}

// TestReadmeBenchTable: the README's bench table has the rows, in order,
// and the first line, that the bench prints.
func TestReadmeBenchTable(t *testing.T) {
	t.Parallel()
	rep := &report.Load{Options: report.Options{Counters: 1, Shards: 10, Workers: 32, Rate: 500, Seconds: 10, WindowMS: 1000, Popularity: bench.PopularityUniform, Delivery: report.DeliveryEmulator,
		Instances: 1, IncrementInstances: 1, DuplicateRate: 0.1, DelayRate: 0.1, MaxDelayMS: 2000, SettleSeconds: 30, Prices: report.StandardPrices, FunctionPrices: report.CloudRunPrices}}
	// a machine that kept up, and a tally that has each figure a run has
	one, peak, events := 1.0, 1, int64(1)
	tally := report.Mode{Mode: report.ModeTally, RatioToRaw: &one, ParentPerS: &one, ParentPeak: &peak, LagP50: &one, LagP99: &one,
		HasRollup: true, Events: &events, Duplicated: &events, Delayed: &events}
	tally.Bill.RollupCPUSeconds = &one
	rep.Modes = []report.Mode{{Mode: report.ModeRaw, IncrPerSec: 500}, tally, {Mode: report.ModeNaive}, {Mode: report.ModePlain, HotDocPerS: 428}}
	block, lines := readmeOutput(t, "bench table", rep.WriteTable)
	if block[0] != lines[0] {
		t.Errorf("the README's first line:\n%s\nthe bench's, with the defaults:\n%s", block[0], lines[0])
	}
	if got, want := strings.Fields(block[2]), strings.Fields(lines[2]); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("the README's modes are %q; the bench runs %q", got, want)
	}
	for i := 3; i < len(lines); i++ {
		got, want := label.FindStringSubmatch(block[i]), label.FindStringSubmatch(lines[i])
		if want == nil && block[i] != lines[i] || want != nil && (got == nil || got[1] != want[1]) {
			t.Errorf("row %d: the README has %q; the bench prints %q", i, block[i], lines[i])
		}
	}
}

// TestReadmeSoakTable: the README's soak has the first line that the
// soak's defaults print, and the same rows.
func TestReadmeSoakTable(t *testing.T) {
	t.Parallel()
	ms := 1.0
	rep := &report.Soak{Options: report.SoakOptions{Seconds: 60, Workers: 64, Rate: bench.SoakRate, Counters: 5, Shards: 10,
		Instances: 3, PauseSeconds: 5, DownSeconds: 2, DuplicateRate: 0.1, DelayRate: 0.1, MaxDelayMS: 2000, SettleSeconds: 30},
		Faults: make([]report.Fault, 4), Counters: make([]report.SoakCounter, 5), ExactAfter: &ms, AnsweredAfter: &ms}
	block, lines := readmeOutput(t, "soak table", rep.WriteTable)
	for i, line := range lines {
		want, got := label.FindStringSubmatch(line), label.FindStringSubmatch(block[i])
		switch {
		case want != nil && (got == nil || got[1] != want[1]):
			t.Errorf("line %d: the README has %q; the soak prints %q", i+1, block[i], line)
		case want == nil && regexp.MustCompile(`^\s*[A-Za-z]`).MatchString(line) && block[i] != line:
			t.Errorf("line %d: the README has %q; the soak prints %q", i+1, block[i], line)
		}
	}
}

// label is a table row's label: its text up to two spaces.
var label = regexp.MustCompile(`^\s*([A-Za-z][A-Za-z0-9 ,/()'-]*?[a-z0-9)])\s{2,}`)

// readmeOutput is the README's block called name and what write prints,
// each as lines, which must be as many.
func readmeOutput(t *testing.T, name string, write func(io.Writer)) (block, lines []string) {
	t.Helper()
	var b bytes.Buffer
	write(&b)
	lines = strings.Split(strings.TrimSpace(b.String()), "\n")
	block = strings.Split(strings.TrimSpace(readme(t, name)), "\n")
	if len(block) != len(lines) {
		t.Fatalf("the README's %s has %d lines; tally prints %d", name, len(block), len(lines))
	}
	return block, lines
}
