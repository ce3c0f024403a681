package stack

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tallycounters/tally/internal/cloudlog"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/testkit/testio"
)

// appRules is an app's rules file: its own match of the posts' likes.
const appRules = `rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    match /posts/{post}/likes/{uid} {
      allow read: if true;
      allow create: if request.auth != null && request.auth.uid == uid; // VERSION
    }
  }
}
`

// TestAppRulesMergedAndReloaded: an app's rules file (serve --rules) is
// enforced with tally's merged in, its own match in place of the
// example's; a change to the file is loaded into the running emulator;
// a file that does not merge is logged, and the rules in force stay.
func TestAppRulesMergedAndReloaded(t *testing.T) {
	paths := emulatortest.RequirePaths(t)
	t.Parallel()
	file := filepath.Join(t.TempDir(), "app.rules")
	if err := os.WriteFile(file, []byte(strings.Replace(appRules, "VERSION", "v1", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	logs := &testio.Buffer{}
	cfg := envConfig(t, map[string]string{"TALLY_COUNTS": "posts:views,likes=count(likes),comments=count(comments)"})
	cfg.Project = emulatortest.Project
	s, _ := startOptions(t, Options{Config: cfg, Emulator: paths, AppRules: file, Logger: cloudlog.New(logs, slog.LevelInfo)})
	enforced := func() string { b, _ := os.ReadFile(s.Rules); return string(b) }
	rules := enforced()
	for _, want := range []string{"// v1", "tally rules --merge", "match /posts/{doc0}/comments/{child}"} {
		if !strings.Contains(rules, want) {
			t.Errorf("the rules enforced hold no %q:\n%s", want, rules)
		}
	}
	if strings.Contains(rules, "match /posts/{doc0}/likes/{child}") {
		t.Errorf("the example's match of likes is enforced beside the app's:\n%s", rules)
	}

	// A change is loaded; the file's time moves on by a second at least,
	// whatever the file system's resolution.
	reload := func(content string) {
		t.Helper()
		if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		later := time.Now().Add(time.Second)
		os.Chtimes(file, later, later)
	}
	reload(strings.Replace(appRules, "VERSION", "v2", 1))
	for deadline := time.Now().Add(emulatortest.Liveness); !strings.Contains(enforced(), "// v2"); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the changed rules were not loaded:\n%s\nlogs:\n%s", enforced(), logs)
		}
	}
	reload("not rules at all")
	for deadline := time.Now().Add(emulatortest.Liveness); !strings.Contains(logs.String(), "the rules in force stay"); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("a file that does not merge was not reported:\n%s", logs)
		}
	}
	if !strings.Contains(enforced(), "// v2") {
		t.Errorf("a file that does not merge replaced the rules in force:\n%s", enforced())
	}
}

// TestAppRulesOnEveryLayout: serve --rules merges the app's rules with
// tally's whatever the layout: the guide's counters, counts on documents,
// the extension's counters, and the last two together; the rules enforced
// hold the app's own match and tally's part, once.
func TestAppRulesOnEveryLayout(t *testing.T) {
	paths := emulatortest.RequirePaths(t)
	t.Parallel()
	file := filepath.Join(t.TempDir(), "app.rules")
	if err := os.WriteFile(file, []byte(appRules), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		env  map[string]string
		want string // a line of tally's part
	}{
		"the guide's counters":     {nil, "match /counters/{counterId} {"},
		"counts on documents":      {map[string]string{"TALLY_COUNTS": "posts:views"}, "function tallyCreate(zeros)"},
		"the extension's counters": {map[string]string{"TALLY_EXTENSION_COUNTERS": "pages:likes"}, "match /pages/{doc0}/_counter_shards_/{shard}"},
		"both": {map[string]string{"TALLY_COUNTS": "posts:views", "TALLY_EXTENSION_COUNTERS": "pages:likes"},
			"match /pages/{doc0}/_counter_shards_/{shard}"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cfg := envConfig(t, c.env)
			cfg.Project = emulatortest.Project
			s, _ := startOptions(t, Options{Config: cfg, Emulator: paths, AppRules: file, Logger: cloudlog.New(&testio.Buffer{}, slog.LevelInfo)})
			b, err := os.ReadFile(s.Rules)
			if err != nil {
				t.Fatal(err)
			}
			rules := string(b)
			for _, want := range []string{"match /posts/{post}/likes/{uid} {", c.want, "tally rules --merge"} {
				if strings.Count(rules, want) != 1 {
					t.Errorf("the rules enforced hold %q %d times; want once:\n%s", want, strings.Count(rules, want), rules)
				}
			}
		})
	}
}
