package tally

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/GoogleCloudPlatform/functions-framework-go/funcframework"

	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/tools/emulator"
	"github.com/tallycounters/tally/internal/tools/proc"
	"github.com/tallycounters/tally/setup"
)

// base is where the functions framework serves the registered functions.
var base string

// The test binary doubles as a Cloud Function's process when
// TALLY_TEST_FUNCTIONS is set: it serves what function.go registers, on
// PORT, as the Functions Framework does when deployed, until it is killed.
func TestMain(m *testing.M) {
	if os.Getenv("TALLY_TEST_FUNCTIONS") == "1" {
		if err := funcframework.StartHostPort("127.0.0.1", os.Getenv("PORT")); err != nil {
			fmt.Fprintln(os.Stderr, "functions framework:", err)
			os.Exit(1)
		}
		return
	}
	os.Setenv(setup.EnvProject, emulatortest.Project)
	port, err := emulator.FreePort("127.0.0.1")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	base = "http://127.0.0.1:" + strconv.Itoa(port)
	go func() {
		if err := funcframework.StartHostPort("127.0.0.1", strconv.Itoa(port)); err != nil {
			fmt.Fprintln(os.Stderr, "functions framework:", err)
			os.Exit(1)
		}
	}()
	emulatortest.Main(m)
}

// TestRegistered: the process function.go makes serves Increment, Rollup
// and Reconcile at their names, and nothing else. Built with a
// configuration that cannot be used, each answers every call 500 with the
// same JSON error, which says only that it could not start, writes
// nothing, and logs the cause, once: no emulator, no Firestore.
func TestRegistered(t *testing.T) {
	port, err := emulator.FreePort("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "TALLY_TEST_FUNCTIONS=1", "PORT="+strconv.Itoa(port), "TALLY_COUNTS=posts:likes,likes")
	logs, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	proc.Prepare(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := make(chan string, 16)
	go func() {
		for sc := bufio.NewScanner(logs); sc.Scan(); {
			lines <- sc.Text()
		}
		close(lines)
	}()
	url := "http://127.0.0.1:" + strconv.Itoa(port)
	call := func(path string) (int, string) {
		t.Helper()
		for deadline := time.Now().Add(emulatortest.Liveness); ; time.Sleep(50 * time.Millisecond) { // until it listens
			resp, err := http.Post(url+path, "application/json", strings.NewReader(`{"counter":"likes"}`))
			if err == nil {
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				return resp.StatusCode, string(b)
			}
			if time.Now().After(deadline) {
				t.Fatalf("POST %s: %v", path, err)
			}
		}
	}
	for _, name := range []string{"/Increment", "/Rollup", "/Reconcile", "/Increment"} {
		code, body := call(name)
		var e struct{ Error string }
		if code != http.StatusInternalServerError || json.Unmarshal([]byte(body), &e) != nil || e.Error != setup.ErrSetup.Error() {
			t.Errorf("POST %s: %d %s; want 500 and %q", name, code, body, setup.ErrSetup.Error())
		}
	}
	if code, _ := call("/Other"); code != http.StatusNotFound {
		t.Errorf("POST /Other: %d; want 404: only the three are registered", code)
	}
	cmd.Process.Kill()
	var causes []string
	for l := range lines {
		if strings.Contains(l, "setup failed") {
			causes = append(causes, l)
		}
	}
	if len(causes) != 4 || !strings.Contains(causes[0], "given twice") {
		t.Errorf("logged %q; want each failed call's cause, the bad declaration", causes)
	}
}
