package stack

import (
	"encoding/json"
	"net/http"
	"os"
	"path"
	"path/filepath"
)

// LocalConfigPath is where the stack tells a page it serves how to reach
// it: the Firebase project, the emulators and Increment (a demoConfig). A
// starter app reads it when it runs on the local stack, as on Firebase
// Hosting it reads /__/firebase/init.json.
const LocalConfigPath = "/__/tally/local.json"

// withApp serves the files of the app in dir (Options.AppDir) to GET and
// HEAD requests of a path that names one (index.html for a directory), and
// everything else with next: the functions. With no dir, it is next.
func withApp(dir string, next http.Handler) http.Handler {
	if dir == "" {
		return next
	}
	files := http.FileServer(http.Dir(dir))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			name := filepath.Join(dir, filepath.FromSlash(path.Clean("/"+r.URL.Path)))
			if st, err := os.Stat(name); err == nil && (!st.IsDir() || fileExists(filepath.Join(name, "index.html"))) {
				w.Header().Set("Cache-Control", "no-cache")
				files.ServeHTTP(w, r)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

func fileExists(name string) bool {
	_, err := os.Stat(name)
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
