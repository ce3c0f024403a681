package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/testkit/testio"
	"github.com/tallycounters/tally/internal/tools/bench"
	"github.com/tallycounters/tally/internal/tools/emulator"
	"github.com/tallycounters/tally/internal/tools/proc"
	"github.com/tallycounters/tally/internal/tools/stack"
)

// The test binary doubles as the tally command when TALLY_TEST_MAIN is set,
// so tests run the real program as a child process.
//
// The tests run in parallel, and mostly wait: for emulators to start, for
// folds a window away, for browsers. Unless -parallel is given, eight run
// at once (emulatortest.ManyAtOnce), not one per CPU.
func TestMain(m *testing.M) {
	bench.InstanceMain()
	if os.Getenv("TALLY_TEST_MAIN") == "1" || filepath.Base(os.Args[0]) == "tally" {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	flag.Parse()
	emulatortest.ManyAtOnce()
	code := m.Run()
	shared.stop()
	os.Exit(code)
}

// childEnv is the environment of a tally child: no emulator of the test's,
// the local project, and env on top.
func childEnv(env []string) []string {
	return append(append(os.Environ(), "TALLY_TEST_MAIN=1", "FIRESTORE_EMULATOR_HOST=", "GOOGLE_CLOUD_PROJECT=demo-tally"), env...)
}

// tallyCommand is the tally command with args, run by this test binary in
// dir ("": this package's) with childEnv(env) around it, in a process group
// of its own that the kernel kills if the test binary dies first (Ctrl-C,
// a timeout's panic): no tally a test started outlives it.
func tallyCommand(dir string, env []string, args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Dir, cmd.Env = dir, childEnv(env)
	proc.Prepare(cmd)
	return cmd
}

// start starts the command with args; its stdout is read line by line.
func start(t *testing.T, env []string, args ...string) (*exec.Cmd, *bufio.Scanner, *testio.Buffer) {
	t.Helper()
	return startIn(t, "", env, args...)
}

// startIn is start in the directory dir ("": this package's).
func startIn(t *testing.T, dir string, env []string, args ...string) (*exec.Cmd, *bufio.Scanner, *testio.Buffer) {
	t.Helper()
	emulatortest.Require(t)
	cmd := tallyCommand(dir, env, args...)
	stderr := &testio.Buffer{}
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, bufio.NewScanner(out), stderr
}

// tallyOut runs the command to its end and returns its output and status.
func tallyOut(t *testing.T, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := tallyCommand("", env, args...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return o.String(), e.String(), code
}

// cliWith runs the command as a child process with env on top of
// childEnv's, to its end, and returns what it wrote to stdout and stderr,
// in the order it wrote it, and its status.
func cliWith(t *testing.T, env []string, args ...string) (string, int) {
	t.Helper()
	cmd := tallyCommand("", env, args...)
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out)), code
}

var (
	pidLine       = regexp.MustCompile(`Firestore emulator \(pid (\d+)\)`)
	functionsLine = regexp.MustCompile(`functions at (http://\S+)/Increment`)
	pubsubLine    = regexp.MustCompile(`Pub/Sub emulator \(pid (\d+)\)`)
)

// ready is what serve printed once it was ready.
type ready struct {
	pid       int    // the emulator's
	emulator  string // FIRESTORE_EMULATOR_HOST
	functions string // base URL of the functions
	lines     []string
	later     *testio.Buffer // what serve prints after
}

// waitReady reads serve's output up to its FIRESTORE_EMULATOR_HOST line, and
// drains the rest in the background.
func waitReady(t *testing.T, out *bufio.Scanner, stderr *testio.Buffer) ready {
	t.Helper()
	r := readyOrGone(out)
	if r.emulator == "" {
		t.Fatalf("serve ended before it was ready: %s", stderr)
	}
	return r
}

// readyOrGone is waitReady for a serve that may exit instead: its ready
// has no emulator if it did.
func readyOrGone(out *bufio.Scanner) ready {
	r := ready{later: &testio.Buffer{}}
	for out.Scan() {
		line := out.Text()
		r.lines = append(r.lines, line)
		if m := pidLine.FindStringSubmatch(line); m != nil {
			r.pid, _ = strconv.Atoi(m[1])
		}
		if m := functionsLine.FindStringSubmatch(line); m != nil {
			r.functions = m[1]
		}
		if host, ok := strings.CutPrefix(line, "export FIRESTORE_EMULATOR_HOST="); ok {
			r.emulator = host
			go func() {
				for out.Scan() {
					r.later.Write([]byte(out.Text() + "\n"))
				}
			}()
			return r
		}
	}
	return r
}

// printed waits until serve has printed sub after its banner, for at
// most emulatortest.Liveness (a liveness bound), and answers whether it
// has.
func (r ready) printed(sub string) bool {
	return r.printedLine(func(l string) bool { return strings.Contains(l, sub) })
}

// printedLine waits, for at most emulatortest.Liveness, until serve has
// printed a line that match holds for.
func (r ready) printedLine(match func(line string) bool) bool {
	for deadline := time.Now().Add(emulatortest.Liveness); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if slices.ContainsFunc(strings.Split(r.later.String(), "\n"), match) {
			return true
		}
	}
	return false
}

// gone waits until pid has exited, for at most emulatortest.Liveness (a liveness
// bound, not a measurement).
func gone(pid int) bool {
	for deadline := time.Now().Add(emulatortest.Liveness); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if !alive(pid) {
			return true
		}
	}
	return false
}

// exitWithin bounds waitExit: a command ends in seconds to a minute or two
// on an idle machine, and waitExit returns as soon as it does.
const exitWithin = 3 * emulatortest.Liveness

func waitExit(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
		return cmd.ProcessState.ExitCode()
	case <-time.After(exitWithin): // a liveness bound: the race detector, parallel packages and a busy machine slow a bench a lot
		cmd.Process.Kill()
		t.Fatalf("tally did not exit within %v", exitWithin)
		return -1
	}
}

// incrementVia adds 1 to counter through Increment at base and says whether it
// was acknowledged.
func incrementVia(t *testing.T, base, counter string) bool {
	t.Helper()
	resp, err := http.Post(base+"/Increment", "application/json", strings.NewReader(`{"counter":"`+counter+`"}`))
	if err != nil {
		t.Errorf("increment: %v", err)
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// rest calls the emulator's REST API for project demo-tally, as the owner
// when owner is set, and returns the status and body.
func rest(t *testing.T, method, emulator, path, body string, owner bool) (int, string) {
	t.Helper()
	url := "http://" + emulator + "/v1/projects/demo-tally/databases/(default)/documents/" + path
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	if owner {
		req.Header.Set("Authorization", "Bearer owner")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// total reads counter's total as the owner; -1 if it has none.
func total(t *testing.T, emulator, counter string) int64 {
	return field(t, emulator, "counters/"+counter, "total")
}

// field reads the integer field name of the document at path as the owner;
// -1 if it has none.
func field(t *testing.T, emulator, path, name string) int64 {
	t.Helper()
	code, body := rest(t, http.MethodGet, emulator, path+"?mask.fieldPaths="+name, "", true)
	if code != http.StatusOK {
		return -1
	}
	var doc struct {
		Fields map[string]struct {
			IntegerValue string `json:"integerValue"`
		} `json:"fields"`
	}
	json.Unmarshal([]byte(body), &doc)
	n, err := strconv.ParseInt(doc.Fields[name].IntegerValue, 10, 64)
	if err != nil {
		return -1
	}
	return n
}

// waitTotal waits until counter's total, on the emulator serve started, is want.
func waitTotal(t *testing.T, emulator, counter string, want int64) {
	t.Helper()
	emulatortest.WaitTotal(t, serveClient(t, emulator), counter, want)
}

// waitField waits until the integer field name of the document at path,
// on the emulator serve started, is want (emulatortest.WaitField).
func waitField(t *testing.T, emulator, path, name string, want int64) {
	t.Helper()
	emulatortest.WaitField(t, serveClient(t, emulator).Doc(path), name, want)
}

// waitFor waits until serve has printed want after it was ready
// (emulatortest.Until).
func (r ready) waitFor(t *testing.T, want string) {
	t.Helper()
	emulatortest.Until(t, fmt.Sprintf("serve to print %q", want), func() (any, bool) {
		out := r.later.String()
		return "\n" + out, strings.Contains(out, want)
	})
}

// shardSum adds up counter's shards, read as the owner.
func shardSum(t *testing.T, emulator, counter string) int64 {
	t.Helper()
	code, body := rest(t, http.MethodGet, emulator, "counters/"+counter+"/shards", "", true)
	if code != http.StatusOK {
		t.Fatalf("list shards: %d %s", code, body)
	}
	var list struct {
		Documents []struct {
			Fields struct {
				Count struct {
					IntegerValue string `json:"integerValue"`
				} `json:"count"`
			} `json:"fields"`
		} `json:"documents"`
	}
	json.Unmarshal([]byte(body), &list)
	var sum int64
	for _, d := range list.Documents {
		n, _ := strconv.ParseInt(d.Fields.Count.IntegerValue, 10, 64)
		sum += n
	}
	return sum
}

// shared is one emulator for the tests that run tally's commands against
// an emulator of their own data (emulatorHost): each in a project of its
// own, which the emulator keeps apart, rather than an emulator each.
// TestMain stops it.
var shared sharedEmulator

type sharedEmulator struct {
	once sync.Once
	e    *emulator.Emulator
	err  error
}

func (s *sharedEmulator) host() (string, error) {
	s.once.Do(func() { s.e, s.err = emulatortest.Start(emulator.Options{}) })
	if s.err != nil {
		return "", s.err
	}
	return s.e.Host(), nil
}

func (s *sharedEmulator) stop() {
	if s.e != nil {
		s.e.Stop()
	}
}

// emulatorHost is the host of the package's shared emulator and a project
// of the test's own in it, empty.
func emulatorHost(t *testing.T) (host, project string) {
	t.Helper()
	emulatortest.Require(t)
	host, err := shared.host()
	if err != nil {
		t.Fatal(err)
	}
	return host, fmt.Sprintf("demo-test-%d", projects.Add(1))
}

// projects numbers the tests' projects in the shared emulator.
var projects atomic.Int64

// serveClient is the test's client of the emulator serve started, in
// serve's project (one per test: emulatortest.ClientAt).
func serveClient(t *testing.T, emulator string) *firestore.Client {
	t.Helper()
	return emulatortest.ClientAt(t, emulator, stack.DefaultProject)
}
