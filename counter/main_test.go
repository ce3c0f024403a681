package counter_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/counter"
	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/testkit/layouttest"
	"github.com/tallycounters/tally/internal/tools/stack"
	"github.com/tallycounters/tally/setup"
)

// Short expiries keep reshard quick; growth is off so shard counts stay put.
const (
	cacheTTL = 300 * time.Millisecond
	window   = 200 * time.Millisecond
)

var local *stack.Stack

// TestMain runs the whole local stack: the functions, with the emulator's
// own trigger events reaching Rollup, so that totals move as in production.
func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		// Every test here needs the local stack: each skips, saying so; the
		// examples cannot, so they are left out by name.
		fmt.Fprintln(os.Stderr, "counter: -short leaves out the examples (Example, ExampleClient_Watch, ExampleClient_lifecycle, ExampleLayoutFromEnv): they need the local stack")
		flag.Set("test.run", "^Test")
		os.Exit(m.Run())
	}
	os.Setenv("TALLY_SHARD_CACHE_TTL", cacheTTL.String())
	os.Setenv("TALLY_ROLLUP_WINDOW", window.String())
	os.Setenv("TALLY_AUTO_GROW", "false")
	paths, err := emulatortest.Paths()
	if err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: %v\n", err)
		os.Exit(1)
	}
	cfg, err := setup.ConfigFromEnv(os.Getenv)
	if err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: %v\n", err)
		os.Exit(1)
	}
	cfg.Project = emulatortest.Project
	local, err = stack.Start(context.Background(), stack.Options{Config: cfg, Emulator: paths})
	if err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: %v\n", err)
		os.Exit(1)
	}
	code := m.Run()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := local.Stop(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "stop: %v\n", err)
	}
	os.Exit(code)
}

func newClient(t testing.TB) (*counter.Client, *firestore.Client) {
	fs := emulatortest.Client(t)
	return counter.New(fs, counter.Options{ShardCacheTTL: cacheTTL, Spacing: window}), fs
}

// newCounter creates a counter with the given shards for the test.
func newCounter(t *testing.T, shards int) (*counter.Client, *firestore.Client, string) {
	t.Helper()
	c, fs := newClient(t)
	id := emulatortest.ID(t)
	if err := c.Create(context.Background(), id, shards); err != nil {
		t.Fatal(err)
	}
	return c, fs, id
}

// incrementing runs workers that add 1 through the Increment function until
// the returned stop is called; stop returns how many were acknowledged.
func incrementing(t *testing.T, id string, workers int) (stop func() int64) {
	var acked atomic.Int64
	done := make(chan struct{})
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				if incrementHTTP(t, id) {
					acked.Add(1)
				}
			}
		}()
	}
	return func() int64 {
		close(done)
		wg.Wait()
		return acked.Load()
	}
}

// watchTotals listens to id's total until ctx ends; the returned func waits
// for that and returns every total the listener saw.
func watchTotals(ctx context.Context, c *counter.Client, id string) func() []int64 {
	var seen []int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		for total, err := range c.Watch(ctx, id, "") {
			if err != nil {
				return
			}
			seen = append(seen, total)
		}
	}()
	return func() []int64 { <-done; return seen }
}

// incrementAndWait adds 1 n times through the Increment function, then
// waits until the total is want.
func incrementAndWait(t *testing.T, c *counter.Client, id string, n int, want int64) {
	t.Helper()
	for range n {
		incrementHTTP(t, id)
	}
	waitTotal(t, c, id, want)
}

// waitTotal waits until the client reads id's total as want (emulatortest.Until).
func waitTotal(t *testing.T, c *counter.Client, id string, want int64) {
	t.Helper()
	emulatortest.Until(t, fmt.Sprintf("the total of %s to be %d", id, want), func() (any, bool) {
		got, err := c.Get(context.Background(), id, "")
		if err != nil {
			return err, false
		}
		return got, got == want
	})
}

// docsClient is a client of counts on documents declared as counts, and a
// client of the emulator, for a test that runs in parallel with others.
func docsClient(t *testing.T, counts string) (*counter.Client, *firestore.Client, core.Layout) {
	t.Helper()
	emulatortest.Require(t)
	fs := emulatortest.Client(t)
	l := core.Default()
	var err error
	if l.Docs, err = core.ParseCounts(counts); err != nil {
		t.Fatal(err)
	}
	return counter.New(fs, counter.Options{Layout: layouttest.Public(l), ShardCacheTTL: cacheTTL, Spacing: window}), fs, l
}
