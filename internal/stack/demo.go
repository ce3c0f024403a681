package stack

import (
	_ "embed"
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
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	demoPage.Execute(w, demoConfig{
		AuthHost: s.AuthHost, FirestoreHost: s.EmulatorHost, Project: s.o.Config.Project,
		Database: s.o.Config.Database, Collection: s.o.Config.Layout.Collection,
	})
}
