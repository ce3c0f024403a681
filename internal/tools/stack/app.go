package stack

import (
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"strings"

	"github.com/tallycounters/tally/internal/httpjson"
)

// LocalConfigPath is where the stack tells a page it serves how to reach
// it: the Firebase project, the emulators and Increment (a demoConfig). A
// starter app reads it when it runs on the local stack, as on Firebase
// Hosting it reads /__/firebase/init.json.
const LocalConfigPath = "/__/tally/local.json"

// withApp serves the files of the app in dir (Options.AppDir) to GET and
// HEAD requests of a path that names one (index.html for a directory), and
// everything else with next: the functions. It serves only what is in
// dir: not a file or folder whose name starts with a dot (.env, .git),
// and nothing a symbolic link leads to outside dir. With no dir, it is
// next.
func withApp(dir string, next http.Handler) (http.Handler, io.Closer, error) {
	if dir == "" {
		return next, nopCloser{}, nil
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("stack: the app's directory: %w", err)
	}
	fsys := root.FS()
	files := http.FileServerFS(fsys)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			name := strings.TrimPrefix(path.Clean("/"+r.URL.Path), "/")
			if hidden(name) {
				httpjson.Error(w, http.StatusNotFound, "not found: the app's files whose names start with a dot are not served")
				return
			}
			if name == "" {
				name = "."
			}
			if st, err := fs.Stat(fsys, name); err == nil && (!st.IsDir() || fileIn(fsys, path.Join(name, "index.html"))) {
				w.Header().Set("Cache-Control", "no-cache")
				files.ServeHTTP(w, r)
				return
			}
		}
		next.ServeHTTP(w, r)
	}), root, nil
}

// hidden reports whether a path of the app's has a part that starts with
// a dot.
func hidden(name string) bool {
	for part := range strings.SplitSeq(name, "/") {
		if strings.HasPrefix(part, ".") {
			return true
		}
	}
	return false
}

type nopCloser struct{}

func (nopCloser) Close() error { return nil }

func fileIn(fsys fs.FS, name string) bool {
	_, err := fs.Stat(fsys, name)
	return err == nil
}

// localConfig serves what a page of this stack needs to reach it.
func (s *Stack) localConfig(w http.ResponseWriter, _ *http.Request) {
	cfg := s.pageConfig()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	json.NewEncoder(w).Encode(struct {
		demoConfig
		URL string `json:"url"`
	}{cfg, "/Increment"})
}
