package stack

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/firestore"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

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

// appRulesFile writes rules to an app's rules file, and gives its path.
func appRulesFile(t *testing.T, rules string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "app.rules")
	if err := os.WriteFile(file, []byte(rules), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// TestAppRulesMergedAndReloaded: an app's rules file (serve --rules) is
// enforced with tally's merged in, its own match in place of the
// example's; a change to the file is loaded into the running emulator;
// a file that does not merge is logged, and the rules in force stay.
func TestAppRulesMergedAndReloaded(t *testing.T) {
	paths := emulatortest.RequirePaths(t)
	t.Parallel()
	file := appRulesFile(t, strings.Replace(appRules, "VERSION", "v1", 1))
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
	file := appRulesFile(t, appRules)
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

// TestExtensionDocumentsReadWithoutAppRules: serve --extension-counters,
// given no rules of the app's, lets the extension's clients read the
// declared documents they listen to, and write none; given the app's
// rules, it adds no read of its own: the app's rules (here, none of
// pages) say who reads them.
func TestExtensionDocumentsReadWithoutAppRules(t *testing.T) {
	paths := emulatortest.RequirePaths(t)
	t.Parallel()
	file := appRulesFile(t, appRules)
	for name, c := range map[string]struct {
		rules string
		read  codes.Code
	}{
		"no rules of the app's": {"", codes.OK},
		"the app's rules":       {file, codes.PermissionDenied},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cfg := envConfig(t, map[string]string{"TALLY_EXTENSION_COUNTERS": "pages:likes;stats/site:visits"})
			cfg.Project = emulatortest.Project
			s, admin := startOptions(t, Options{Config: cfg, Emulator: paths, AppRules: c.rules, Logger: cloudlog.New(&testio.Buffer{}, slog.LevelInfo)})
			ctx := context.Background()
			for _, path := range []string{"pages/home", "stats/site", "secrets/s1"} {
				if _, err := admin.Doc(path).Set(ctx, map[string]any{"likes": 3}); err != nil {
					t.Fatal(err)
				}
			}
			client := anonymous(t, s.EmulatorHost)
			for _, path := range []string{"pages/home", "stats/site"} {
				if _, err := client.Doc(path).Get(ctx); status.Code(err) != c.read {
					t.Errorf("a signed-out client's read of %s: %v; want %v", path, err, c.read)
				}
				if _, err := client.Doc(path).Update(ctx, []firestore.Update{{Path: "likes", Value: 1000}}); status.Code(err) != codes.PermissionDenied {
					t.Errorf("a signed-out client's write of %s: %v; want it refused", path, err)
				}
			}
			if _, err := client.Doc("secrets/s1").Get(ctx); status.Code(err) != codes.PermissionDenied {
				t.Errorf("a signed-out client's read of a document nothing declares: %v; want it refused", err)
			}
		})
	}
}

// anonymous is a client of the emulator at host with no credentials: the
// rules in force say what it may do.
func anonymous(t *testing.T, host string) *firestore.Client {
	t.Helper()
	conn, err := grpc.NewClient(host, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	c, err := firestore.NewClient(context.Background(), emulatortest.Project, option.WithGRPCConn(conn))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
