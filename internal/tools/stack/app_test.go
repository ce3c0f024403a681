package stack

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
)

// TestAppServesOnlyTheApp: serve --app answers with the app's files, and
// not with its dotfiles (.env, .git), nor with what a symbolic link leads
// to outside the app's folder; everything else goes to the functions.
// Only requests addressed to an IP address or localhost are answered.
func TestAppServesOnlyTheApp(t *testing.T) {
	root := t.TempDir()
	app, outside := filepath.Join(root, "app"), filepath.Join(root, "outside")
	for name, body := range map[string]string{
		"app/index.html":     "the app",
		"app/sub/index.html": "a page",
		"app/.env":           "SECRET=1",
		"app/.git/config":    "[core]",
		"outside/passwd":     "root:x:0:0",
	} {
		p := filepath.Join(root, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(app, "etclink")); err != nil {
		t.Fatal(err)
	}
	functions := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) })
	h, closer, err := withApp(app, functions)
	if err != nil {
		t.Fatal(err)
	}
	defer closer.Close()
	h = (&Stack{}).gate(h)
	for _, c := range []struct {
		host, path string
		code       int
		body       string
	}{
		{"127.0.0.1:8080", "/", 200, "the app"},
		{"localhost:8080", "/sub/", 200, "a page"},
		{"[::1]:8080", "/index.html", 301, ""}, // to ./, as http.FileServer does
		{"127.0.0.1:8080", "/.env", 404, ""},
		{"127.0.0.1:8080", "/.git/config", 404, ""},
		{"127.0.0.1:8080", "/sub/../.env", 404, ""},
		{"127.0.0.1:8080", "/etclink/passwd", http.StatusTeapot, ""}, // not the app's: the functions answer
		{"127.0.0.1:8080", "/Increment", http.StatusTeapot, ""},
		{"evil.example:8080", "/", http.StatusMisdirectedRequest, ""},
		{"evil.example", "/Increment", http.StatusMisdirectedRequest, ""},
	} {
		r := httptest.NewRequest(http.MethodGet, "http://"+c.host+c.path, nil)
		r.Host = c.host
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != c.code || (c.body != "" && w.Body.String() != c.body) {
			t.Errorf("GET %s from %s: %d %q; want %d %q", c.path, c.host, w.Code, w.Body.String(), c.code, c.body)
		}
		if w.Body.String() == "root:x:0:0" || w.Body.String() == "SECRET=1" || w.Body.String() == "[core]" {
			t.Errorf("GET %s: served %q", c.path, w.Body.String())
		}
	}
}
