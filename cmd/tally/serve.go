package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/tallycounters/tally/internal/cloudlog"
	"github.com/tallycounters/tally/internal/stack"
)

func runServe(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	port := fs.Int("port", envInt("PORT", 8080), "port of the functions (/Increment, /Rollup); env PORT")
	host := fs.String("host", "127.0.0.1", "address to serve on")
	emuPort := fs.Int("emulator-port", 0, "port of the Firestore emulator (default: a free one)")
	bridgePort := fs.Int("bridge-port", 0, "port of the event bridge the emulator posts to (default: a free one)")
	data := fs.String("data", "", "keep the emulator's data in `DIR` across runs")
	verbose := fs.Bool("v", false, "show the emulator's own output")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "tally serve: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	o := stack.Options{
		Project: localProject(), Host: *host, Port: *port, EmulatorPort: *emuPort, BridgePort: *bridgePort,
		DataDir: *data, ExternalHost: os.Getenv("FIRESTORE_EMULATOR_HOST"),
		Logger: cloudlog.New(stdout, slog.LevelInfo),
	}
	if *verbose {
		o.EmulatorOutput = stderr
	}
	if o.ExternalHost == "" {
		var ok bool
		if o.Emulator, ok = locateEmulator("serve", stderr); !ok {
			return 1
		}
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	s, err := stack.Start(ctx, o)
	if err != nil {
		fmt.Fprintf(stderr, "tally serve: %v\n", err)
		return 1
	}
	printReady(stdout, s, o)

	code := 0
	select {
	case <-ctx.Done():
		fmt.Fprintln(stderr, "tally serve: stopping")
	case <-s.Done():
		fmt.Fprintf(stderr, "tally serve: the Firestore emulator exited unexpectedly: %v\n", s.Emulator.Err())
		code = 1
	}
	sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.Stop(sctx); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(stderr, "tally serve: %v\n", err)
		code = 1
	}
	return code
}

func printReady(w io.Writer, s *stack.Stack, o stack.Options) {
	if s.Emulator != nil {
		fmt.Fprintf(w, "tally: Firestore emulator (pid %d) at %s, delivering events to %s\n",
			s.Emulator.PID(), s.EmulatorHost, s.BridgeAddr)
	} else {
		fmt.Fprintf(w, "tally: using the emulator at %s (FIRESTORE_EMULATOR_HOST). Rollup runs only if that "+
			"emulator was started with --functions_emulator %s\n", s.EmulatorHost, s.BridgeAddr)
	}
	if o.DataDir != "" {
		fmt.Fprintf(w, "tally: data kept in %s\n", o.DataDir)
	}
	fmt.Fprintf(w, "tally: functions at %s/Increment and %s/Rollup; Ctrl-C stops everything\n", s.FunctionsURL, s.FunctionsURL)
	fmt.Fprintf(w, "FIRESTORE_EMULATOR_HOST=%s\n", s.EmulatorHost)
	fmt.Fprintf(w, "curl -s -X POST %s/Increment -H 'Content-Type: application/json' -d '{\"counter\":\"likes\"}'\n", s.FunctionsURL)
	fmt.Fprintf(w, "curl -s -H 'Authorization: Bearer owner' 'http://%s/v1/projects/%s/databases/(default)/documents/%s/likes'\n",
		s.EmulatorHost, o.Project, "counters")
}

func envInt(key string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(key)); err == nil {
		return n
	}
	return def
}
