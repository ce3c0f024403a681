// Package stack runs tally on one machine: the Firestore emulator, the
// registered functions served by the functions framework, and the bridge
// that carries the emulator's trigger events to Rollup.
package stack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/GoogleCloudPlatform/functions-framework-go/funcframework"

	"github.com/tallycounters/tally/internal/bridge"
	"github.com/tallycounters/tally/internal/emulator"
)

// TriggerKey names the Rollup trigger registered with the emulator.
const TriggerKey = "tally-rollup"

// Options configures Start.
type Options struct {
	Project        string // default demo-tally
	Host           string // address to serve on; default 127.0.0.1
	Port           int    // functions port; 0 picks a free one
	EmulatorPort   int    // 0 picks a free one
	BridgePort     int    // 0 picks a free one
	DataDir        string // import on start, export on Stop
	ExternalHost   string // use this running emulator instead of starting one
	Emulator       emulator.Paths
	EmulatorOutput io.Writer
	Logger         *slog.Logger
	Bridge         bridge.Options // Target is filled in
	Pattern        string         // default counters/{counterId}/shards/{shardId}
}

// Stack is a running local tally.
type Stack struct {
	EmulatorHost string // FIRESTORE_EMULATOR_HOST
	FunctionsURL string // e.g. http://127.0.0.1:8080; functions at /Increment, /Rollup
	BridgeAddr   string // the --functions_emulator address
	Emulator     *emulator.Emulator
	Bridge       *bridge.Bridge

	o        Options
	bridgeSv *http.Server
}

// Start brings the stack up. The functions read their configuration from the
// environment, so Start sets FIRESTORE_EMULATOR_HOST and GOOGLE_CLOUD_PROJECT
// for this process. The functions framework cannot be stopped: a process
// starts one stack.
func Start(ctx context.Context, o Options) (*Stack, error) {
	if o.Project == "" {
		o.Project = "demo-tally"
	}
	if o.Host == "" {
		o.Host = "127.0.0.1"
	}
	if o.Pattern == "" {
		o.Pattern = "counters/{counterId}/shards/{shardId}"
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Stack{o: o}
	port, err := listenPort(o.Host, o.Port)
	if err != nil {
		return nil, err
	}
	s.FunctionsURL = "http://" + net.JoinHostPort(o.Host, strconv.Itoa(port))

	bl, err := net.Listen("tcp", net.JoinHostPort(o.Host, strconv.Itoa(o.BridgePort)))
	if err != nil {
		return nil, fmt.Errorf("stack: bridge: %w", err)
	}
	s.BridgeAddr = bl.Addr().String()
	bo := o.Bridge
	bo.Target = s.FunctionsURL + "/Rollup"
	if bo.Logger == nil {
		bo.Logger = o.Logger
	}
	s.Bridge = bridge.New(bo)
	s.bridgeSv = &http.Server{Handler: s.Bridge, ReadHeaderTimeout: 10 * time.Second}
	go s.bridgeSv.Serve(bl)

	if o.ExternalHost != "" {
		s.EmulatorHost = o.ExternalHost
	} else {
		eo := emulator.Options{Paths: o.Emulator, Host: o.Host, Port: o.EmulatorPort,
			FunctionsEmulator: s.BridgeAddr, Output: o.EmulatorOutput}
		if o.DataDir != "" {
			eo.ImportData = emulator.LatestExport(o.DataDir)
		}
		if s.Emulator, err = emulator.Start(ctx, eo); err != nil {
			s.bridgeSv.Close()
			return nil, err
		}
		s.EmulatorHost = s.Emulator.Host()
	}
	os.Setenv("FIRESTORE_EMULATOR_HOST", s.EmulatorHost)
	os.Setenv("GOOGLE_CLOUD_PROJECT", o.Project)

	trigger := emulator.Trigger{EventType: "google.cloud.firestore.document.v1.written", Pattern: o.Pattern}
	if err := emulator.RegisterTrigger(ctx, s.EmulatorHost, o.Project, TriggerKey, trigger); err != nil {
		s.Stop(context.Background())
		return nil, err
	}
	served := make(chan error, 1)
	go func() { served <- funcframework.StartHostPort(o.Host, strconv.Itoa(port)) }()
	if err := waitServing(ctx, s.FunctionsURL, served); err != nil {
		s.Stop(context.Background())
		return nil, err
	}
	return s, nil
}

// listenPort checks that port is free (or finds one) on host.
func listenPort(host string, port int) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		return 0, fmt.Errorf("stack: functions port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func waitServing(ctx context.Context, url string, served <-chan error) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		resp, err := http.Get(url + "/Increment")
		if err == nil {
			resp.Body.Close()
			return nil
		}
		select {
		case err := <-served:
			return fmt.Errorf("stack: functions framework: %w", err)
		case <-ctx.Done():
			return fmt.Errorf("stack: functions not serving at %s: %w", url, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Done is closed if the emulator the stack started exits; nil for an
// external emulator.
func (s *Stack) Done() <-chan struct{} {
	if s.Emulator == nil {
		return nil
	}
	return s.Emulator.Done()
}

// Stop lets in-flight events finish (bounded by ctx), exports the data when
// DataDir is set, and stops the emulator and the bridge.
func (s *Stack) Stop(ctx context.Context) error {
	var errs []error
	if s.Bridge != nil {
		if err := s.Bridge.Wait(ctx); err != nil {
			errs = append(errs, fmt.Errorf("stack: events still in flight: %w", err))
		}
	}
	if s.Emulator != nil {
		if s.o.DataDir != "" {
			select {
			case <-s.Emulator.Done():
			default:
				if err := s.Emulator.Export(ctx, s.o.Project, s.o.DataDir); err != nil {
					errs = append(errs, err)
				}
			}
		}
		if err := s.Emulator.Stop(); err != nil {
			errs = append(errs, err)
		}
	}
	if s.bridgeSv != nil {
		s.bridgeSv.Close()
	}
	return errors.Join(errs...)
}
