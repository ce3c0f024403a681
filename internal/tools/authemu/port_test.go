package authemu

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"
)

// TestMain lets this test binary stand in for a Firebase CLI whose port
// another process took: it serves on the Auth port of the firebase.json in
// its directory, as that other process would, and exits without saying it
// is ready, as the CLI does when its port is taken.
func TestMain(m *testing.M) {
	if os.Getenv("AUTHEMU_TEST_OTHER") == "1" {
		os.Exit(serveAsAnother())
	}
	os.Exit(m.Run())
}

func serveAsAnother() int {
	conf, _ := os.ReadFile("firebase.json")
	m := regexp.MustCompile(`"auth":\{"host":"127.0.0.1","port":(\d+)\}`).FindSubmatch(conf)
	if m == nil {
		return 2
	}
	port, _ := strconv.Atoi(string(m[1]))
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return 2
	}
	// Answers as an Auth emulator would, on its root.
	go http.Serve(l, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"authEmulator":{"ready":true}}`)
	}))
	time.Sleep(time.Second)
	fmt.Println("Error: Could not start Auth Emulator, port taken.")
	return 1
}

// Start takes no answer for its emulator's until the CLI has said its
// emulators are ready: an answer before that may be another process's.
func TestStartOnATakenPort(t *testing.T) {
	dir := script(t, "firebase", "AUTHEMU_TEST_OTHER=1 exec "+os.Args[0])
	t.Setenv("TALLY_FIREBASE", filepath.Join(dir, "firebase"))
	e, err := Start(context.Background(), "demo-tally", nil)
	if err == nil {
		e.Stop()
		t.Fatalf("Start returned the emulator at %s, where another process answered", e.Host)
	}
	if !errors.Is(err, errExited) {
		t.Fatalf("Start where another process answered: %v; want the CLI's exit", err)
	}
}
