package stack

import (
	"net/http"
	"testing"

	"github.com/tallycounters/tally/internal/testkit/emulatortest"
)

// TestOriginsHaveTheirLoopbackTwins: a page origin TALLY_CORS_ORIGINS
// names as 127.0.0.1 may call the local functions as localhost too, on the
// same port, and the other way (a dev server prints one, a browser may be
// pointed at either); another port, or another host, may not.
func TestOriginsHaveTheirLoopbackTwins(t *testing.T) {
	paths := emulatortest.RequirePaths(t)
	t.Parallel()
	cfg := envConfig(t, map[string]string{"TALLY_CORS_ORIGINS": "http://127.0.0.1:5173,http://localhost:3000"})
	cfg.Project = emulatortest.Project
	s, _ := startOptions(t, Options{Config: cfg, Emulator: paths})
	for origin, want := range map[string]bool{
		"http://127.0.0.1:5173": true, "http://localhost:5173": true,
		"http://localhost:3000": true, "http://127.0.0.1:3000": true,
		"http://localhost:5174": false, "http://example.com:5173": false,
	} {
		req, _ := http.NewRequest(http.MethodOptions, s.FunctionsURL+"/Increment", nil)
		req.Header.Set("Origin", origin)
		req.Header.Set("Access-Control-Request-Method", "POST")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.Header.Get("Access-Control-Allow-Origin") == origin; got != want {
			t.Errorf("a page of %s: allowed %t (%d, %q); want %t", origin, got, resp.StatusCode, resp.Header.Get("Access-Control-Allow-Origin"), want)
		}
	}
}
