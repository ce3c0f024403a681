package deploy

import (
	"strings"
	"testing"

	"github.com/tallycounters/tally/internal/core"
)

// TestMergeNotesWhatTheAppsMatchLacks: a merge says, of the app's own
// match of a counted collection, only the conditions on tally's fields
// that the creates and updates it allows do not hold already, each of
// its own allow (an allow of both, or a write, counts for both); one that
// holds them all, or allows no such write, gets no note.
func TestMergeNotesWhatTheAppsMatchLacks(t *testing.T) {
	l := core.Default()
	var err error
	if l.Docs, err = core.ParseCounts("posts:likes=count(likes)"); err != nil {
		t.Fatal(err)
	}
	tally, err := CountsRules(l, false)
	if err != nil {
		t.Fatal(err)
	}
	const (
		create = "tallyCreate({}) && tallyKeeps({'likes': 0}, []) && tallyInt('likes')"
		update = "tallyUpdate({}) && tallyKeeps({'likes': 0}, [])"
	)
	for name, c := range map[string]struct{ allows, want string }{
		"none":                  {"allow create: if request.auth != null;\n      allow update: if request.auth != null;", "create must also hold " + create + ", and its allow update must also hold " + update},
		"a write of both":       {"allow write: if request.auth != null;", "create must also hold " + create + ", and its allow update must also hold " + update},
		"create's alone":        {"allow create: if request.auth != null && " + create + ";\n      allow update: if request.auth != null;", "its allow update must also hold " + update},
		"an update's in create": {"allow create: if " + create + " && " + update + ";\n      allow update: if true;", "its allow update must also hold " + update},
		"no update allowed":     {"allow create: if " + create + ";", ""},
		"both":                  {"allow create: if " + create + ";\n      allow update: if " + update + ";", ""},
		"one allow of both":     {"allow create, update: if " + create + " && " + update + ";", ""},
	} {
		app := "rules_version = '2';\nservice cloud.firestore {\n  match /databases/{database}/documents {\n    match /posts/{post} {\n      " +
			c.allows + "\n    }\n  }\n}\n"
		m, err := MergeRules(app, tally)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var notes []string
		for _, n := range m.Notes {
			if strings.Contains(n, "/posts/{post} ") {
				notes = append(notes, n)
			}
		}
		if c.want == "" && len(notes) != 0 || c.want != "" && (len(notes) != 1 || !strings.Contains(notes[0], c.want)) {
			t.Errorf("%s: notes %q; want %q", name, notes, c.want)
		}
	}
}
