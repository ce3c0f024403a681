package deploy

import (
	"net/http"
	"strings"
	"testing"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
)

// appRules are an app's own rules: its profiles, and its posts, which
// tally counts.
const appRules = `rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    match /profiles/{uid} {
      allow read, write: if request.auth != null && request.auth.uid == uid;
    }
    match /posts/{postId} {
      allow read: if true;
      allow create: if request.auth != null && request.resource.data.owner == request.auth.uid;
      allow update: if request.auth != null && resource.data.owner == request.auth.uid;
    }
  }
}
`

// TestMergeRules: tally rules --merge puts tally's functions and matches
// in the app's rules and the example's match of each counted collection
// the app does not match (the posts' comments), leaves the app's own
// matches as they were and says what its match of posts must add; the
// merged rules load on the emulator, and with those conditions added,
// refuse a client's write of a count and take the app's own writes.
func TestMergeRules(t *testing.T) {
	t.Parallel()
	emulatortest.Require(t)
	l := core.Default()
	var err error
	if l.Docs, err = core.ParseCounts("posts:likes,views,comments=count(comments)"); err != nil {
		t.Fatal(err)
	}
	tally, err := CountsRules(l, false)
	if err != nil {
		t.Fatal(err)
	}
	m, err := MergeRules(appRules, tally)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"function tallyCreate(", "match /{path=**}/shards/{shard}", "match /posts/{doc0}/comments/{child}", "match /profiles/{uid}", "match /posts/{postId}"} {
		if strings.Count(m.Rules, want) != 1 {
			t.Errorf("the merged rules hold %q %d times, want once:\n%s", want, strings.Count(m.Rules, want), m.Rules)
		}
	}
	if strings.Contains(m.Rules, "match /posts/{doc0} {") || len(m.Notes) != 1 || !strings.Contains(m.Notes[0], "/posts/{postId}") ||
		!strings.Contains(m.Notes[0], "tallyCreate({'likes': 0, 'views': 0})") || !strings.Contains(m.Notes[0], "tallyUpdate({'likes': 0, 'views': 0})") {
		t.Fatalf("notes %q; want one, on the app's match of posts, with the conditions to add", m.Notes)
	}
	if _, err := MergeRules("rules_version = '2';\n", tally); err == nil {
		t.Error("rules with no block of documents were merged")
	}
	// The app adds what the note says, as its owner would.
	fixed := strings.Replace(m.Rules, "request.resource.data.owner == request.auth.uid;\n      allow update: if request.auth != null && resource.data.owner == request.auth.uid;",
		"request.resource.data.owner == request.auth.uid && tallyCreate({'likes': 0, 'views': 0}) && tallyKeeps({'comments': 0}, []);\n"+
			"      allow update: if request.auth != null && resource.data.owner == request.auth.uid && tallyUpdate({'likes': 0, 'views': 0}) && tallyKeeps({'comments': 0}, []);", 1)
	base := rulesEmulator(t, fixed)
	alice := rest{t, base, userToken(rulesProject, "alice")}
	for _, c := range []struct {
		method, path, body string
		want               int
	}{
		{"PATCH", "profiles/alice", `{"fields":{"name":{"stringValue":"Alice"}}}`, http.StatusOK},
		{"PATCH", "profiles/bob", `{"fields":{"name":{"stringValue":"not hers"}}}`, http.StatusForbidden},
		{"POST", "posts?documentId=p1", `{"fields":{"owner":{"stringValue":"alice"},"likes":{"integerValue":"0"}}}`, http.StatusOK},
		{"POST", "posts?documentId=p2", `{"fields":{"owner":{"stringValue":"alice"},"likes":{"integerValue":"1000"}}}`, http.StatusForbidden},
		{"PATCH", "posts/p1?updateMask.fieldPaths=likes", `{"fields":{"likes":{"integerValue":"1000"}}}`, http.StatusForbidden},
		{"POST", "posts/p1/comments?documentId=c1", `{"fields":{"owner":{"stringValue":"alice"},"text":{"stringValue":"hi"}}}`, http.StatusOK},
		{"PATCH", "posts/p1/lives/1/shards/0", `{"fields":{"likes":{"integerValue":"5"}}}`, http.StatusForbidden},
	} {
		if got := alice.do(c.method, c.path, c.body); got != c.want {
			t.Errorf("alice's %s %s: %d, want %d", c.method, c.path, got, c.want)
		}
	}
}
