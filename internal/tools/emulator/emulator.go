// Package emulator runs the Cloud Firestore emulator from the Google Cloud CLI
// as a child process in its own process group, and stops all of it again.
package emulator

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tallycounters/tally/internal/tools/proc"
)

var (
	errExited     = errors.New("emulator: exited before it was ready")
	errBadArchive = fmt.Errorf("%w, started from a class-data archive, now removed", errExited)
)

// Options configures Start. The zero value starts a plain emulator on a free
// loopback port.
type Options struct {
	Paths             Paths     // from Locate; found automatically when empty
	Host              string    // address to bind; default 127.0.0.1
	Port              int       // 0 picks a free port
	FunctionsEmulator string    // host:port that receives trigger events
	ImportData        string    // export metadata file to load on start (see LatestExport)
	Rules             string    // security rules file
	Output            io.Writer // the emulator's stdout and stderr; nil discards
	StartTimeout      time.Duration
	JVMFlags          []string // default DefaultJVMFlags
	CacheDir          string   // for the class-data archive (see cds.go); default the user's cache directory, tally/
}

// DefaultJVMFlags keep the JVM to its quick C1 compiler. On a small machine
// the optimising C2 compiler's threads otherwise take the emulator's CPU for
// its first minutes: measured here on 2 cores at 500 writes/s, trigger events
// reached their function 1.9 s after the commit (p50) with C2 and 2 ms
// without.
var DefaultJVMFlags = []string{"-XX:TieredStopAtLevel=1"}

// Emulator is a running emulator.
type Emulator struct {
	cmd   *exec.Cmd
	group *proc.Group
	host  string
	said  *Tail // what the JVM printed
	done  chan struct{}
	err   error // set before done closes

	stopOnce sync.Once
	stopErr  error
	killed   atomic.Bool // Stop ended it with SIGKILL
}

// DefaultStartTimeout bounds an emulator's start when Options say nothing:
// it starts in seconds on an idle machine, and Start returns as soon as it
// answers, or as soon as its process exits; the bound is for a machine
// many times slower, or a process that hangs.
const DefaultStartTimeout = 10 * time.Minute

// Start runs the emulator and returns once it answers HTTP. ctx bounds only
// the start; Stop ends the process.
func Start(ctx context.Context, o Options) (*Emulator, error) {
	if o.Paths.Jar == "" {
		p, err := Locate("", "")
		if err != nil {
			return nil, err
		}
		o.Paths = p
	}
	if o.Host == "" {
		o.Host = "127.0.0.1"
	}
	if o.StartTimeout == 0 {
		o.StartTimeout = DefaultStartTimeout
	}
	if o.JVMFlags == nil {
		o.JVMFlags = DefaultJVMFlags
	}
	// A free port is picked by closing it again: another process may take
	// it before the JVM binds it, seconds later. The emulator then exits
	// at once; try again on another.
	for attempt := 1; ; attempt++ {
		try := o
		if o.Port == 0 {
			port, err := FreePort(o.Host)
			if err != nil {
				return nil, err
			}
			try.Port = port
		}
		e, err := start(ctx, try)
		retry := errors.Is(err, errBadArchive) || errors.Is(err, errExited) && o.Port == 0
		if err == nil || !retry || attempt == 3 {
			return e, err
		}
	}
}

// start makes one attempt of Start, on o.Port.
func start(ctx context.Context, o Options) (*Emulator, error) {
	cds := newArchive(o.Paths, o.JVMFlags, o.CacheDir)
	args := append(slices.Concat(o.JVMFlags, cds.flags()), "-Duser.language=en", "-cp", o.Paths.Jar, mainName, "start",
		"--host", o.Host, "--port", strconv.Itoa(o.Port))
	if o.FunctionsEmulator != "" {
		args = append(args, "--functions_emulator", o.FunctionsEmulator)
	}
	if o.ImportData != "" {
		args = append(args, "--import-data", o.ImportData)
	}
	if o.Rules != "" {
		args = append(args, "--rules", o.Rules)
	}
	cmd := exec.Command(o.Paths.Java, args...)
	tail := &Tail{Marker: runningLine}
	out := io.Writer(tail)
	if o.Output != nil {
		out = io.MultiWriter(o.Output, tail)
	}
	cmd.Stdout, cmd.Stderr = out, out
	// Own process group, so a terminal's Ctrl-C reaches us and we stop the
	// JVM in order; and killed with us if we die without stopping it.
	group, err := proc.Start(cmd)
	if err != nil {
		return nil, fmt.Errorf("emulator: start %s: %w", o.Paths.Java, err)
	}
	e := &Emulator{cmd: cmd, group: group, host: net.JoinHostPort(o.Host, strconv.Itoa(o.Port)), said: tail, done: make(chan struct{})}
	go func() {
		e.err = cmd.Wait()
		cds.exited()
		close(e.done)
	}()
	ctx, cancel := context.WithTimeoutCause(ctx, o.StartTimeout, fmt.Errorf("not ready within %v of its start", o.StartTimeout))
	defer cancel()
	if err := e.waitReady(ctx); err != nil {
		_ = e.Stop()
		if errors.Is(err, errExited) && cds.used() {
			cds.broken()
			err = errBadArchive
		}
		if errors.Is(err, errExited) {
			err = fmt.Errorf("%w; its last output:\n%s", err, tail)
		}
		return nil, err
	}
	return e, nil
}

// runningLine is what the emulator prints once it serves on its port; it
// exits with a BindException instead when another process holds the port.
const runningLine = "Dev App Server is now running"

// waitReady waits until the emulator has said it is running and its root
// answers "Ok". Its answer alone is not enough: the port was free when
// picked, and another process (another test's emulator, say) may have
// taken it since; this one then exits, and the other answers meanwhile.
func (e *Emulator) waitReady(ctx context.Context) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		if e.said.Marked() && Check(e.host) == nil {
			return nil
		}
		select {
		case <-e.done:
			return fmt.Errorf("%w: %v", errExited, e.err)
		case <-ctx.Done():
			return fmt.Errorf("emulator: the Firestore emulator (pid %d) was running but not answering at %s when its start's bound ended: %w",
				e.cmd.Process.Pid, e.host, context.Cause(ctx))
		case <-tick.C:
		}
	}
}

// Up reports whether an emulator answers at host (host:port).
func Up(host string) bool { return Check(host) == nil }

// Check says whether a Firestore emulator answers at host (host:port)
// within 3 seconds: its root says "Ok". The error says what answered
// instead, if anything did.
func Check(host string) error {
	client := &http.Client{Timeout: 3 * time.Second}
	resp, err := client.Get("http://" + host + "/")
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the cause, without the request
		}
		return fmt.Errorf("no Firestore emulator answers at %s (%w)", host, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64))
	if resp.StatusCode != http.StatusOK || strings.TrimSpace(string(body)) != "Ok" {
		return fmt.Errorf("%s is not a Firestore emulator: it answered %s %q", host, resp.Status, strings.TrimSpace(string(body)))
	}
	return nil
}

// StopGrace is how long Stop waits for the JVM to exit on SIGTERM before
// it kills its process group.
const StopGrace = 30 * time.Second

// stopGrace is StopGrace, which a test shortens.
var stopGrace = StopGrace

// Killed reports whether Stop had to kill the emulator: it had not exited
// within StopGrace of SIGTERM.
func (e *Emulator) Killed() bool { return e.killed.Load() }

// Host is the emulator's host:port, the value for FIRESTORE_EMULATOR_HOST.
func (e *Emulator) Host() string { return e.host }

// PID is the JVM's process id, which is also its process group id.
func (e *Emulator) PID() int { return e.cmd.Process.Pid }

// Pause stops the emulator's processes where they are, as a machine that
// stalls would (not on Windows: proc.ErrUnsupported).
func (e *Emulator) Pause() error { return e.group.Pause() }

// Resume continues a paused emulator.
func (e *Emulator) Resume() error { return e.group.Resume() }

// Done is closed when the emulator process has exited, for any reason.
func (e *Emulator) Done() <-chan struct{} { return e.done }

// Err is how the process exited; valid once Done is closed.
func (e *Emulator) Err() error {
	<-e.done
	return e.err
}

// Stop asks the emulator's process group to terminate, and kills the
// group if it has not exited within StopGrace: it is stopped either way
// (Killed says which). It is safe to call more than once.
func (e *Emulator) Stop() error {
	e.stopOnce.Do(func() {
		pgid := e.cmd.Process.Pid
		select {
		case <-e.done:
			return
		default:
		}
		if err := e.group.Terminate(); err != nil {
			e.stopErr = fmt.Errorf("emulator: stop %d: %w", pgid, err)
		}
		select {
		case <-e.done:
		case <-time.After(stopGrace):
			// The JVM took SIGTERM and is still shutting down (seen under
			// load, after the data was saved): what it holds is in memory,
			// or exported already, so ending it now loses nothing.
			_ = e.group.Kill()
			<-e.done
			e.killed.Store(true)
		}
	})
	return e.stopErr
}

// Tail keeps the last 2 KB written to it: what a process said last, to
// say why it exited. With a Marker, it also notes whether the process
// ever said that: a server's line that it is up, which tells its answers
// from those of another process that took its port first.
type Tail struct {
	Marker string

	mu     sync.Mutex
	buf    []byte
	marked bool
}

func (w *Tail) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	if w.Marker != "" && !w.marked {
		w.marked = bytes.Contains(w.buf, []byte(w.Marker))
	}
	if n := len(w.buf); n > 2048 {
		w.buf = w.buf[n-2048:]
	}
	return len(p), nil
}

// Marked says whether the Marker was ever written.
func (w *Tail) Marked() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.marked
}

func (w *Tail) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return string(w.buf)
}
