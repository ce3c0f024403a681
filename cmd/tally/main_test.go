package main

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tallycounters/tally/internal/emulator"
	"github.com/tallycounters/tally/internal/emulatortest"
)

// The test binary doubles as the tally command when TALLY_TEST_MAIN is set,
// so tests run the real program as a child process.
func TestMain(m *testing.M) {
	if os.Getenv("TALLY_TEST_MAIN") == "1" {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// tally starts the command with args; its stdout is read line by line.
func tally(t *testing.T, env []string, args ...string) (*exec.Cmd, *bufio.Scanner, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), "TALLY_TEST_MAIN=1", "FIRESTORE_EMULATOR_HOST=", "GOOGLE_CLOUD_PROJECT=demo-tally"), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, bufio.NewScanner(out), &stderr
}

var pidLine = regexp.MustCompile(`Firestore emulator \(pid (\d+)\)`)

// ready is what serve printed once it was ready.
type ready struct {
	pid       int    // the emulator's
	emulator  string // FIRESTORE_EMULATOR_HOST
	functions string // base URL of the functions
}

var functionsLine = regexp.MustCompile(`functions at (http://\S+)/Increment`)

// waitReady reads serve's output up to its FIRESTORE_EMULATOR_HOST line, and
// drains the rest in the background.
func waitReady(t *testing.T, out *bufio.Scanner, stderr *bytes.Buffer) ready {
	t.Helper()
	var r ready
	for out.Scan() {
		line := out.Text()
		if m := pidLine.FindStringSubmatch(line); m != nil {
			r.pid, _ = strconv.Atoi(m[1])
		}
		if m := functionsLine.FindStringSubmatch(line); m != nil {
			r.functions = m[1]
		}
		if host, ok := strings.CutPrefix(line, "FIRESTORE_EMULATOR_HOST="); ok {
			r.emulator = host
			go func() {
				for out.Scan() {
				}
			}()
			return r
		}
	}
	t.Fatalf("serve ended before it was ready: %s", stderr)
	return r
}

// alive reports whether pid is a live process (a zombie counts as gone).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	return err == nil && !bytes.Contains(stat, []byte(") Z "))
}

func waitExit(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
		return cmd.ProcessState.ExitCode()
	case <-time.After(90 * time.Second):
		cmd.Process.Kill()
		t.Fatal("serve did not exit within 90s")
		return -1
	}
}

func TestServeStopsEverythingOnSignal(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd, out, stderr := tally(t, nil, "serve", "--port", "0")
			pid := waitReady(t, out, stderr).pid
			if pid == 0 || !alive(pid) {
				t.Fatalf("emulator pid %d not running", pid)
			}
			cmd.Process.Signal(sig)
			if code := waitExit(t, cmd); code != 0 {
				t.Errorf("exit status %d after %v: %s", code, sig, stderr)
			}
			if alive(pid) {
				syscall.Kill(-pid, syscall.SIGKILL)
				t.Errorf("the emulator (pid %d) outlived serve", pid)
			}
		})
	}
}

// TestServeKeepsData increments a counter, stops serve, starts it again on
// the same --data folder and finds the counter there.
func TestServeKeepsData(t *testing.T) {
	dir := t.TempDir()
	cmd, out, stderr := tally(t, nil, "serve", "--port", "0", "--data", dir)
	r := waitReady(t, out, stderr)
	resp, err := http.Post(r.functions+"/Increment?counter=kept&by=7", "", nil)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("increment: %v %v", resp, err)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if code := waitExit(t, cmd); code != 0 {
		t.Fatalf("exit status %d: %s", code, stderr)
	}

	cmd, out, stderr = tally(t, nil, "serve", "--port", "0", "--data", dir)
	r = waitReady(t, out, stderr)
	req, _ := http.NewRequest(http.MethodGet, "http://"+r.emulator+
		"/v1/projects/demo-tally/databases/(default)/documents/counters/kept/shards", nil)
	req.Header.Set("Authorization", "Bearer owner")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `"integerValue": "7"`) {
		t.Errorf("after a restart the shard written before is gone: %s", body)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	waitExit(t, cmd)
}

func TestServeFailsWhenEmulatorCrashes(t *testing.T) {
	cmd, out, stderr := tally(t, nil, "serve", "--port", "0")
	pid := waitReady(t, out, stderr).pid
	syscall.Kill(pid, syscall.SIGKILL)
	if code := waitExit(t, cmd); code == 0 {
		t.Error("serve exited 0 after its emulator crashed")
	}
	if !strings.Contains(stderr.String(), "exited unexpectedly") {
		t.Errorf("stderr does not report the crash: %s", stderr)
	}
}

func TestServeWithoutEmulatorExplains(t *testing.T) {
	for name, env := range map[string][]string{
		"no emulator": {"TALLY_FIRESTORE_EMULATOR=/nonexistent"},
		"no Java":     {"JAVA=/nonexistent/java"},
	} {
		t.Run(name, func(t *testing.T) {
			cmd, _, stderr := tally(t, env, "serve", "--port", "0")
			if code := waitExit(t, cmd); code == 0 {
				t.Errorf("serve exited 0 with %s", name)
			}
			for _, want := range []string{"cannot find", "gcloud components install cloud-firestore-emulator", "google-cloud-cli-firestore-emulator", "default-jre-headless"} {
				if !strings.Contains(stderr.String(), want) {
					t.Errorf("error does not mention %q: %s", want, stderr)
				}
			}
		})
	}
}

func TestHelpListsCommands(t *testing.T) {
	var out bytes.Buffer
	if code := run([]string{"help"}, &out, &out); code != 0 {
		t.Errorf("help exited %d", code)
	}
	if !strings.Contains(out.String(), "serve") {
		t.Errorf("help does not list serve:\n%s", out.String())
	}
	if code := run([]string{"frobnicate"}, &out, &out); code != 2 {
		t.Errorf("unknown command exited %d, want 2", code)
	}
}

// TestServeUsesGivenEmulator runs serve with FIRESTORE_EMULATOR_HOST set: it
// starts no emulator of its own, says what trigger delivery needs, and leaves
// that emulator running when it stops.
func TestServeUsesGivenEmulator(t *testing.T) {
	e, err := emulatortest.Start(emulator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Stop()
	cmd, out, stderr := tally(t, []string{"FIRESTORE_EMULATOR_HOST=" + e.Host()}, "serve", "--port", "0")
	var said []string
	for out.Scan() {
		said = append(said, out.Text())
		if strings.HasPrefix(out.Text(), "FIRESTORE_EMULATOR_HOST=") {
			break
		}
	}
	go func() {
		for out.Scan() {
		}
	}()
	text := strings.Join(said, "\n")
	if !strings.Contains(text, "FIRESTORE_EMULATOR_HOST="+e.Host()) || !strings.Contains(text, "--functions_emulator") {
		t.Errorf("serve said:\n%s\nwant the given emulator and what trigger delivery needs", text)
	}
	if pidLine.MatchString(text) {
		t.Error("serve started an emulator of its own")
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if code := waitExit(t, cmd); code != 0 {
		t.Errorf("exit status %d: %s", code, stderr)
	}
	select {
	case <-e.Done():
		t.Error("serve stopped an emulator it did not start")
	default:
	}
}
