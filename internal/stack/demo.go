package stack

import (
	"crypto/rand"
	_ "embed"
	"fmt"
	"html/template"
	"net/http"
)

//go:embed demo.html
var demoSource string

var demoPage = template.Must(template.New("demo").Parse(demoSource))

// demoConfig is what the demo page needs to know of the stack.
type demoConfig struct {
	AuthHost      string `json:"authHost"` // "" without sign-in
	FirestoreHost string `json:"firestoreHost"`
	Project       string `json:"project"`
	Database      string `json:"database"`
	Collection    string `json:"collection"`
}

// demo serves a like button: a page with no build step that signs a user
// in against the Auth emulator, votes through Increment and shows the total
// as it reads it from the Firestore emulator.
func (s *Stack) demo(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "use GET", http.StatusMethodNotAllowed)
		return
	}
	cfg := demoConfig{
		AuthHost: s.AuthHost, FirestoreHost: s.EmulatorHost, Project: s.o.Config.Project,
		Database: s.o.Config.Database, Collection: s.o.Config.Layout.Collection,
	}
	nonce := rand.Text()
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", demoPolicy(nonce, cfg))
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	demoPage.Execute(w, demoPageData{Nonce: nonce, Config: cfg})
}

// demoPageData is what the page's template is given.
type demoPageData struct {
	Nonce  string // of its one script and one style
	Config demoConfig
}

// demoPolicy is the page's Content-Security-Policy: its own script and
// style only (by nonce), requests to this server and the two emulators
// only, and no framing, forms, plugins or base.
func demoPolicy(nonce string, cfg demoConfig) string {
	connect := "'self' http://" + cfg.FirestoreHost
	if cfg.AuthHost != "" {
		connect += " http://" + cfg.AuthHost
	}
	return fmt.Sprintf("default-src 'none'; script-src 'nonce-%s'; style-src 'nonce-%s'; connect-src %s; "+
		"frame-ancestors 'none'; form-action 'none'; base-uri 'none'; object-src 'none'", nonce, nonce, connect)
}
