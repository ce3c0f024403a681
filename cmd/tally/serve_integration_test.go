package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/testkit/testio"
	"github.com/tallycounters/tally/internal/tools/emulator"
)

func TestServeStopsEverythingOnSignal(t *testing.T) {
	t.Parallel()
	cmd, out, stderr := start(t, nil, "serve", "--port", "0")
	pid := waitReady(t, out, stderr).pid
	if pid == 0 || !alive(pid) {
		t.Fatalf("emulator pid %d not running", pid)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if code := waitExit(t, cmd); code != 0 {
		t.Errorf("exit status %d after SIGTERM: %s", code, stderr)
	}
	if alive(pid) {
		killGroup(pid)
		t.Errorf("the emulator (pid %d) outlived serve", pid)
	}
}

// TestServeLocally checks what serve enforces as the cloud does: security
// rules refuse clients' writes, the owner reads; and its limits: a
// half-open connection is closed, a JSON body with a key twice is refused,
// /Rollup refuses a body over 512 KiB. Then Ctrl-C stops it all.
func TestServeLocally(t *testing.T) {
	t.Parallel()
	cmd, out, stderr := start(t, nil, "serve", "--port", "0")
	r := waitReady(t, out, stderr)
	if !incrementVia(t, r.functions, "likes") {
		t.Fatal("the first increment failed")
	}
	waitTotal(t, r.emulator, "likes", 1)
	for _, path := range []string{"counters/likes?updateMask.fieldPaths=total", "counters/likes/shards/0?updateMask.fieldPaths=count"} {
		code, body := rest(t, http.MethodPatch, r.emulator, path, `{"fields":{"total":{"integerValue":"999"},"count":{"integerValue":"999"}}}`, false)
		if code != http.StatusForbidden {
			t.Errorf("a client's PATCH of %s answered %d, want 403: %s", path, code, body)
		}
	}
	if got := total(t, r.emulator, "likes"); got != 1 {
		t.Errorf("total = %d after the refused writes, want 1", got)
	}

	// A body with a key twice, and an event that no trigger sent.
	resp, err := http.Post(r.functions+"/Increment", "application/json", strings.NewReader(`{"counter":"likes","by":1,"by":900}`))
	if err != nil || resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a body with a key twice: %v %v, want 400", resp.Status, err)
	}
	resp, err = http.Post(r.functions+"/Rollup", "application/protobuf", bytes.NewReader(make([]byte, 600<<10)))
	if err != nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("an event from outside the emulator's triggers: %v %v, want 403", resp.Status, err)
	}

	// A page of another origin: its requests that need no preflight are
	// refused, unwritten; the serve's own pages' are taken.
	for _, path := range []string{"/Increment?counter=likes", "/Rollup", "/Reconcile"} {
		req, _ := http.NewRequest(http.MethodPost, r.functions+path, nil)
		req.Header.Set("Origin", "https://evil.example")
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != http.StatusForbidden {
			t.Errorf("a page of another origin: POST %s answered %v %v, want 403", path, resp.Status, err)
		}
	}
	req, _ := http.NewRequest(http.MethodPost, r.functions+"/Increment?counter=likes", nil)
	req.Header.Set("Origin", r.functions)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("serve's own page: POST /Increment answered %v %v, want 200", resp.Status, err)
	}
	waitTotal(t, r.emulator, "likes", 2)

	// Headers that never end: the server closes the connection.
	conn, err := net.Dial("tcp", strings.TrimPrefix(r.functions, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /Increment HTTP/1.1\r\nHost: x\r\n")
	conn.SetReadDeadline(time.Now().Add(time.Minute)) // a liveness bound
	if _, err := io.ReadAll(conn); err != nil {
		t.Errorf("a half-open connection was not closed: %v", err)
	}

	cmd.Process.Signal(syscall.SIGINT)
	if code := waitExit(t, cmd); code != 0 {
		t.Errorf("exit status %d after SIGINT: %s", code, stderr)
	}
	if alive(r.pid) {
		t.Errorf("the emulator (pid %d) outlived serve", r.pid)
	}
}

// TestServeDrainsThenSaves stops serve --data right after increments: it
// answers their events and folds before it saves, so the totals are exact
// as soon as it is back.
func TestServeDrainsThenSaves(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cmd, out, stderr := start(t, nil, "serve", "--port", "0", "--data", dir)
	r := waitReady(t, out, stderr)
	acked := map[string]int64{}
	for i := range 6 {
		id := fmt.Sprintf("kept-%d", i%2)
		if incrementVia(t, r.functions, id) {
			acked[id]++
		}
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if code := waitExit(t, cmd); code != 0 {
		t.Fatalf("exit status %d: %s", code, stderr)
	}

	cmd, out, stderr = start(t, nil, "serve", "--port", "0", "--data", dir)
	r = waitReady(t, out, stderr)
	for id, n := range acked {
		if got := total(t, r.emulator, id); got != n {
			t.Errorf("after a restart, the total of %s is %d, want the %d acknowledged", id, got, n)
		}
	}
	cmd.Process.Signal(syscall.SIGTERM)
	waitExit(t, cmd)
}

// TestServeKeepsCountsOnDocumentsAcrossRestarts: with --data, a post's
// likes survive three restarts, each with likes acknowledged before it,
// and its next like adds to them: the emulator's import gives every
// document a new create time, which is not the life its counts are kept
// under.
func TestServeKeepsCountsOnDocumentsAcrossRestarts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := []string{"TALLY_COUNTS=posts:likes"}
	acked := int64(0)
	for round := range 4 {
		cmd, out, stderr := start(t, env, "serve", "--port", "0", "--data", dir)
		r := waitReady(t, out, stderr)
		if round == 0 {
			if code, body := rest(t, http.MethodPatch, r.emulator, "posts/kept", `{"fields":{"title":{"stringValue":"kept"}}}`, true); code != http.StatusOK {
				t.Fatalf("create the post: %d %s", code, body)
			}
		} else if got := field(t, r.emulator, "posts/kept", "likes"); got != acked {
			t.Errorf("after restart %d, likes = %d, want the %d acknowledged", round, got, acked)
		}
		for range 3 {
			resp, err := http.Post(r.functions+"/Increment", "application/json", strings.NewReader(`{"counter":"posts/kept","field":"likes"}`))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				acked++
			}
		}
		waitField(t, r.emulator, "posts/kept", "likes", acked)
		cmd.Process.Signal(syscall.SIGTERM)
		if code := waitExit(t, cmd); code != 0 {
			t.Fatalf("exit status %d: %s", code, stderr)
		}
	}
}

func TestServeFailsWhenEmulatorCrashes(t *testing.T) {
	t.Parallel()
	cmd, out, stderr := start(t, nil, "serve", "--port", "0")
	pid := waitReady(t, out, stderr).pid
	kill(pid)
	if code := waitExit(t, cmd); code == 0 {
		t.Error("serve exited 0 after its emulator crashed")
	}
	if !strings.Contains(stderr.String(), "exited unexpectedly") {
		t.Errorf("stderr does not report the crash: %s", stderr)
	}
}

// TestServeWithExternalEmulator runs serve on an emulator it did not start:
// after serve crashes, its restart folds the writes whose events were lost;
// when the emulator restarts, serve registers its trigger again; and serve
// leaves the emulator running when it stops.
func TestServeWithExternalEmulator(t *testing.T) {
	t.Parallel()
	emulatortest.Require(t)
	bridgePort, err := emulator.FreePort("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	emuPort, _ := emulator.FreePort("127.0.0.1")
	eo := emulator.Options{Port: emuPort, FunctionsEmulator: "127.0.0.1:" + strconv.Itoa(bridgePort)}
	e, err := emulatortest.Start(eo)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { e.Stop() }()
	env := []string{"FIRESTORE_EMULATOR_HOST=" + e.Host()}
	args := []string{"serve", "--port", "0", "--bridge-port", strconv.Itoa(bridgePort)}

	cmd, out, stderr := start(t, env, args...)
	r := waitReady(t, out, stderr)
	if pidLine.MatchString(strings.Join(r.lines, "\n")) || !strings.Contains(strings.Join(r.lines, "\n"), "--functions_emulator") {
		t.Errorf("serve said:\n%s\nwant no emulator of its own, and what trigger delivery needs", strings.Join(r.lines, "\n"))
	}
	for range 5 {
		incrementVia(t, r.functions, "kept")
	}
	waitTotal(t, e.Host(), "kept", 5)

	// serve dies; writes go on without it, and their events are lost.
	cmd.Process.Kill()
	waitExit(t, cmd)
	for range 3 {
		commitIncrement(t, e.Host(), "counters/kept/shards/0")
	}
	cmd, out, stderr = start(t, env, args...)
	r = waitReady(t, out, stderr)
	if got := total(t, e.Host(), "kept"); got != 8 {
		t.Errorf("after serve's restart the total is %d, want 8: the 3 writes made while it was down", got)
	}

	// The emulator restarts, empty and without triggers: serve registers
	// its trigger again, so totals move once more.
	e.Stop()
	e = restartOn(t, eo)
	r.waitFor(t, "the emulator is back")
	for range 4 {
		if !incrementVia(t, r.functions, "again") {
			t.Error("an increment failed after the emulator's restart")
		}
	}
	waitTotal(t, e.Host(), "again", 4)

	cmd.Process.Signal(syscall.SIGTERM)
	if code := waitExit(t, cmd); code != 0 {
		t.Errorf("exit status %d: %s", code, stderr)
	}
	if !emulator.Up(e.Host()) {
		t.Error("serve stopped an emulator it did not start")
	}
}

// TestServeStopsWithItsParent runs serve under a parent that, as 'go run'
// does, dies of SIGTERM without passing it on: serve stops, and so does its
// emulator.
func TestServeStopsWithItsParent(t *testing.T) {
	t.Parallel()
	emulatortest.Require(t)
	parent := exec.Command("bash", "-c", `"$0" serve --port 0 & wait`, os.Args[0])
	parent.Env = childEnv(nil)
	stdout, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &testio.Buffer{}
	parent.Stderr = stderr
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { parent.Process.Kill(); parent.Wait() })
	r := waitReady(t, bufio.NewScanner(stdout), stderr)
	parent.Process.Signal(syscall.SIGTERM)
	parent.Wait()
	if !gone(r.pid) {
		killGroup(r.pid)
		t.Errorf("the emulator (pid %d) outlived serve's parent: %s", r.pid, stderr)
	}
}

// TestServeSavesHoweverStopped: serve --data saves its data when Ctrl-C
// stops it with its output going to a pipe whose reader is gone (as when
// Ctrl-C also stops the tee it writes to: each line it writes then fails),
// and when the terminal closes (SIGHUP); the next start has the counts.
func TestServeSavesHoweverStopped(t *testing.T) {
	emulatortest.Require(t)
	t.Parallel()
	for _, c := range []struct {
		name   string
		sig    syscall.Signal
		closed bool // the pipe's reader gone before the signal
	}{
		{"Ctrl-C, output to a pipe whose reader is gone", syscall.SIGINT, true},
		{"the terminal closed", syscall.SIGHUP, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			emulatortest.Require(t)
			dir := t.TempDir()
			pr, pw, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			cmd := tallyCommand("", nil, "serve", "--port", "0", "--data", dir)
			cmd.Stdout, cmd.Stderr = pw, pw // 2>&1 | tee
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
			pw.Close()
			r := waitReady(t, bufio.NewScanner(pr), &testio.Buffer{})
			for range 2 {
				if !incrementVia(t, r.functions, "kept") {
					t.Fatal("an increment failed")
				}
			}
			if c.closed {
				pr.Close()
			}
			cmd.Process.Signal(c.sig)
			if code := waitExit(t, cmd); code != 0 {
				t.Fatalf("exit status %d after %v", code, c.sig)
			}
			if !c.closed {
				pr.Close()
			}
			again, out, stderr := start(t, nil, "serve", "--port", "0", "--data", dir)
			r = waitReady(t, out, stderr)
			if got := total(t, r.emulator, "kept"); got != 2 {
				t.Errorf("after a restart, the total is %d, want the 2 acknowledged", got)
			}
			again.Process.Signal(syscall.SIGTERM)
			waitExit(t, again)
		})
	}
}

// TestServeOnGivenPorts: serve --port, --emulator-port and --auth-port
// (with sign-in) listen where they were told, as docs/mobile.md has an
// app on a phone emulator reach them, and say so; --auth-port without
// sign-in is refused.
func TestServeOnGivenPorts(t *testing.T) {
	t.Parallel()
	if out, code := cliWith(t, nil, "serve", "--auth-port", "9099"); code != 2 || !strings.Contains(out, "only with TALLY_AUTH=firebase") {
		t.Errorf("--auth-port without sign-in: exit %d\n%s\nwant 2, and why", code, out)
	}
	// The ports are found free (below the kernel's range of ports it
	// picks itself) but may still be taken by another test's process
	// before serve binds them: then serve says so and exits, and another
	// try takes other ports.
	var ports [3]string
	var cmd *exec.Cmd
	var r ready
	for attempt := 1; ; attempt++ {
		for i := range ports {
			ports[i] = strconv.Itoa(freePort(t))
		}
		var out *bufio.Scanner
		var stderr *testio.Buffer
		cmd, out, stderr = start(t, []string{"TALLY_AUTH=firebase"}, "serve", "--port", ports[0], "--emulator-port", ports[1], "--auth-port", ports[2])
		if r = readyOrGone(out); r.emulator != "" || attempt == 3 || !strings.Contains(stderr.String(), "address already in use") {
			if r.emulator == "" {
				t.Fatalf("serve ended before it was ready: %s", stderr)
			}
			break
		}
	}
	if r.functions != "http://127.0.0.1:"+ports[0] || r.emulator != "127.0.0.1:"+ports[1] {
		t.Errorf("serve is at %s, its emulator at %s; want ports %s and %s", r.functions, r.emulator, ports[0], ports[1])
	}
	if banner := strings.Join(r.lines, "\n"); !strings.Contains(banner, "Firebase Auth emulator at 127.0.0.1:"+ports[2]) {
		t.Errorf("the banner does not put the Auth emulator on port %s:\n%s", ports[2], banner)
	}
	if resp, err := http.Get("http://127.0.0.1:" + ports[2] + "/emulator/v1/projects/demo-tally/config"); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("the Auth emulator does not answer on port %s: %v %v", ports[2], resp, err)
	} else {
		resp.Body.Close()
	}
	cmd.Process.Signal(syscall.SIGTERM)
	waitExit(t, cmd)
}

// freePort is a loopback port that nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	p, err := emulator.FreePort("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// restartOn starts an emulator again on the port of eo, which the one
// stopped just before held. Another process may hold that port for a
// moment (seen once in a run of the whole suite: the JVM exited with
// "Address already in use", though an emulator restarted on its port
// with connections open binds it at once alone); then it is tried again,
// until a liveness bound.
func restartOn(t *testing.T, eo emulator.Options) *emulator.Emulator {
	t.Helper()
	for deadline := time.Now().Add(emulatortest.Liveness); ; time.Sleep(time.Second) {
		e, err := emulatortest.Start(eo)
		if err == nil {
			return e
		}
		if !strings.Contains(err.Error(), "Address already in use") || time.Now().After(deadline) {
			t.Fatal(err)
		}
		t.Logf("port %d is held by another process: %v", eo.Port, err)
	}
}
