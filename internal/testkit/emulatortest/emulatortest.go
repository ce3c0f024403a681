// Package emulatortest gives tests a real Firestore emulator: Main starts one
// per test binary (or reuses FIRESTORE_EMULATOR_HOST), Client connects to it,
// and ID names counters so that tests never share data.
package emulatortest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"regexp"
	"sync"
	"syscall"
	"testing"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/fsrpc"
	"github.com/tallycounters/tally/internal/tools/emulator"
	"github.com/tallycounters/tally/internal/tools/opcount"
)

// Project is the project id tests use; "demo-" ids never reach a real project.
const Project = "demo-tally-test"

// Liveness bounds a test's wait for something that happens in a second or
// so on an idle machine (a fold, a listener's update, a process's output):
// the wait ends as soon as it happens; the bound is for a machine many
// times slower, and only a hang reaches it.
const Liveness = 5 * time.Minute

// Main runs the package's tests against an emulator and exits. It starts one
// unless FIRESTORE_EMULATOR_HOST is set, and stops it after the tests, on
// SIGINT or SIGTERM, and (by the kernel) if the test binary dies. If no
// emulator can be started every test fails: none is skipped. after runs
// once the tests end, to stop what else they started.
func Main(m *testing.M, after ...func()) {
	code := run(m)
	for _, f := range after {
		f()
	}
	os.Exit(code)
}

// shared is the package's emulator, as Main found or started it.
var shared string

func run(m *testing.M) int {
	flag.Parse()
	ManyAtOnce()
	if shared = os.Getenv("FIRESTORE_EMULATOR_HOST"); shared != "" || testing.Short() {
		return m.Run() // -short: the tests that need the emulator skip, saying so
	}
	e, err := Start(emulator.Options{})
	if err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: %v\n", err)
		return 1
	}
	defer e.Stop()
	shared = e.Host()
	os.Setenv("FIRESTORE_EMULATOR_HOST", shared)
	return m.Run()
}

// Host is the package's emulator: the one Main started, or found in
// FIRESTORE_EMULATOR_HOST. Client follows the variable (a test may point
// it at a proxy); a test beside stacks uses Host, as a stack started in
// the process points the variable at its own emulator, which stops with
// the stack.
func Host() string {
	if shared != "" {
		return shared
	}
	return os.Getenv("FIRESTORE_EMULATOR_HOST")
}

// Paths finds Java and the emulator as the tests' users set them up.
func Paths() (emulator.Paths, error) { return emulator.LocateEnv(os.Getenv) }

// RequirePaths is Require, then Paths, failing the test if Java or the
// emulator cannot be found (the error says how to install them).
func RequirePaths(t testing.TB) emulator.Paths {
	t.Helper()
	Require(t)
	paths, err := Paths()
	if err != nil {
		t.Fatal(err)
	}
	return paths
}

// Start starts an emulator for tests with its output on stderr when
// TALLY_EMULATOR_LOG is set, and stops it on SIGINT or SIGTERM.
func Start(o emulator.Options) (*emulator.Emulator, error) {
	paths, err := Paths()
	if err != nil {
		return nil, err
	}
	o.Paths = paths
	if os.Getenv("TALLY_EMULATOR_LOG") != "" {
		o.Output = os.Stderr
	}
	e, err := emulator.Start(context.Background(), o)
	if err != nil {
		return nil, err
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		select {
		case s := <-sig:
			e.Stop()
			fmt.Fprintf(os.Stderr, "emulatortest: %v: stopped the emulator\n", s)
			os.Exit(2)
		case <-e.Done():
			signal.Stop(sig)
		}
	}()
	return e, nil
}

// Client returns a client for the emulator in FIRESTORE_EMULATOR_HOST, closed
// when the test ends.
func Client(t testing.TB) *firestore.Client {
	t.Helper()
	Require(t)
	if os.Getenv("FIRESTORE_EMULATOR_HOST") == "" {
		t.Fatal("emulatortest: FIRESTORE_EMULATOR_HOST is not set; call emulatortest.Main from TestMain")
	}
	return ClientAt(t, os.Getenv("FIRESTORE_EMULATOR_HOST"), Project)
}

// ClientAt returns a client of project on the emulator at host, closed
// when the test ends; a test that asks again gets the same one. Tests that
// run in parallel, each on an emulator of its own, use it:
// FIRESTORE_EMULATOR_HOST is the process's.
func ClientAt(t testing.TB, host, project string) *firestore.Client {
	t.Helper()
	k := clientKey{t, host, project}
	if c, ok := clients.Load(k); ok {
		return c.(*firestore.Client)
	}
	c, err := fsrpc.EmulatorClient(context.Background(), host, project, firestore.DefaultDatabaseID, nil, nil)
	if err != nil {
		t.Fatalf("emulatortest: client: %v", err)
	}
	if had, loaded := clients.LoadOrStore(k, c); loaded {
		c.Close()
		return had.(*firestore.Client)
	}
	t.Cleanup(func() {
		clients.Delete(k)
		c.Close()
	})
	return c
}

// clients holds ClientAt's clients, one per test, emulator and project,
// until the test ends.
var clients sync.Map

type clientKey struct {
	t             testing.TB
	host, project string
}

// CountingClient returns a client for the emulator in
// FIRESTORE_EMULATOR_HOST whose reads and writes are counted.
func CountingClient(t testing.TB) (*firestore.Client, *opcount.Ops) {
	t.Helper()
	Require(t)
	ops := &opcount.Ops{}
	c, err := opcount.Client(context.Background(), os.Getenv("FIRESTORE_EMULATOR_HOST"), Project, ops)
	if err != nil {
		t.Fatalf("emulatortest: counted client: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c, ops
}

// Unreachable returns a client whose Firestore is an address where nothing
// listens, for tests of how failures are handled.
func Unreachable(t testing.TB) *firestore.Client {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := l.Addr().String()
	l.Close()
	t.Setenv("FIRESTORE_EMULATOR_HOST", dead)
	return ClientAt(t, dead, Project)
}

var unsafe = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// ID returns a counter id no other test or run uses.
func ID(t testing.TB) string {
	var b [4]byte
	rand.Read(b[:])
	name := unsafe.ReplaceAllString(t.Name(), "_")
	if len(name) > 80 {
		name = name[len(name)-80:]
	}
	return name + "-" + hex.EncodeToString(b[:])
}

// Life is the life of the named counter's document now (see layout's
// life.go), under which its shards, votes and keys are: "" in the guide
// core.
func Life(t testing.TB, l core.Layout, c *firestore.Client, name string) string {
	t.Helper()
	life, err := l.CurrentLife(context.Background(), c, name)
	if err != nil {
		t.Fatal(err)
	}
	return life
}
