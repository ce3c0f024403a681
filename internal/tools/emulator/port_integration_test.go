package emulator_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/tools/emulator"
)

// TestStartOnATakenPort: a port picked free may be taken by another
// process before the JVM binds it; the JVM then exits. Start must not take
// the other process's answer for its emulator's, even when it answers as
// an emulator does.
func TestStartOnATakenPort(t *testing.T) {
	paths := emulatortest.RequirePaths(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	other := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "Ok") })}
	go other.Serve(l)
	t.Cleanup(func() { other.Close() })

	port := l.Addr().(*net.TCPAddr).Port
	e, err := emulator.Start(context.Background(), emulator.Options{Paths: paths, Port: port, CacheDir: t.TempDir()})
	if err == nil {
		e.Stop()
		t.Fatalf("Start on port %d, held by another server, returned an emulator", port)
	}
	if !strings.Contains(err.Error(), "Address already in use") {
		t.Errorf("Start on a taken port: %v; want the JVM's reason", err)
	}
}
