// Package rulesapi stands in for the Firebase Rules API in tests: the
// releases and rulesets of projects, read and published as tally reads
// and publishes them (deploy.Release), on loopback, in memory.
package rulesapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Server is the stand-in: its URL is the endpoint to give
// deploy.Release (or TALLY_RULES_API).
type Server struct {
	URL string

	mu       sync.Mutex
	releases map[string]string // release name: ruleset name
	rulesets map[string]string // ruleset name: its one file's source
	next     int
}

type file struct {
	Name    string `json:"name"`
	Content string `json:"content"`
}

type ruleset struct {
	Name   string `json:"name,omitempty"`
	Source struct {
		Files []file `json:"files"`
	} `json:"source"`
}

type release struct {
	Name        string `json:"name"`
	RulesetName string `json:"rulesetName"`
}

// New starts a stand-in, stopped when the test ends.
func New(t testing.TB) *Server {
	t.Helper()
	s := &Server{releases: map[string]string{}, rulesets: map[string]string{}}
	srv := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(srv.Close)
	s.URL = srv.URL + "/"
	return s
}

// Put makes source the rules in force of release (deploy.ReleaseName's),
// as an app published them.
func (s *Server) Put(releaseName, source string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.releases[releaseName] = s.create("projects/"+strings.Split(releaseName, "/")[1], source)
}

// Live is the source in force for release, "" if none is.
func (s *Server) Live(releaseName string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rulesets[s.releases[releaseName]]
}

// create stores a ruleset of project. s.mu is held.
func (s *Server) create(project, source string) string {
	s.next++
	name := fmt.Sprintf("%s/rulesets/r%d", project, s.next)
	s.rulesets[name] = source
	return name
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	name := strings.TrimPrefix(r.URL.Path, "/v1/")
	switch {
	case r.Method == http.MethodGet && strings.Contains(name, "/releases/"):
		rs, ok := s.releases[name]
		if !ok {
			notFound(w, name)
			return
		}
		answer(w, release{Name: name, RulesetName: rs})
	case r.Method == http.MethodGet && strings.Contains(name, "/rulesets/"):
		src, ok := s.rulesets[name]
		if !ok {
			notFound(w, name)
			return
		}
		var rs ruleset
		rs.Name, rs.Source.Files = name, []file{{Name: "firestore.rules", Content: src}}
		answer(w, rs)
	case r.Method == http.MethodPost && strings.HasSuffix(name, "/rulesets"):
		var rs ruleset
		if err := json.NewDecoder(r.Body).Decode(&rs); err != nil || len(rs.Source.Files) != 1 {
			http.Error(w, `{"error":{"code":400,"message":"one file"}}`, http.StatusBadRequest)
			return
		}
		rs.Name = s.create(strings.TrimSuffix(name, "/rulesets"), rs.Source.Files[0].Content)
		answer(w, rs)
	case r.Method == http.MethodPost && strings.HasSuffix(name, "/releases"):
		var rel release
		if err := json.NewDecoder(r.Body).Decode(&rel); err != nil {
			http.Error(w, `{"error":{"code":400,"message":"a release"}}`, http.StatusBadRequest)
			return
		}
		s.releases[rel.Name] = rel.RulesetName
		answer(w, rel)
	case r.Method == http.MethodPatch && strings.Contains(name, "/releases/"):
		var req struct{ Release release }
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, `{"error":{"code":400,"message":"a release"}}`, http.StatusBadRequest)
			return
		}
		s.releases[name] = req.Release.RulesetName
		answer(w, req.Release)
	default:
		http.Error(w, `{"error":{"code":400,"message":"not served by the stand-in"}}`, http.StatusBadRequest)
	}
}

func answer(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

func notFound(w http.ResponseWriter, name string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusNotFound)
	fmt.Fprintf(w, `{"error":{"code":404,"message":"%s not found","status":"NOT_FOUND"}}`, name)
}
