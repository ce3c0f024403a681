package deploy

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/testkit/rulesapi"
)

// TestEveryDeployPathKeepsTheAppsRules: an app has its own rules in
// force (its profiles and posts); deploy.sh's dry run, on every path (the
// guide's counters, the public like button, likes as votes, counts on the
// app's posts, the extension's counters, and merging into the app's rules
// file),
// prints what the merge changes of them, adding and removing nothing of
// the app's; the command it prints to publish the rules keeps every rule
// of the app's and adds tally's part, once, however often it runs; and
// tally rules --publish alone refuses to replace them.
func TestEveryDeployPathKeepsTheAppsRules(t *testing.T) {
	t.Parallel()
	emulatortest.Long(t, "runs deploy.sh, which builds the tally command")
	base := []string{"--project", "demo-proj", "--region", "us-central1", "--database-location", "nam5"}
	file := filepath.Join(t.TempDir(), "firestore.rules")
	if err := os.WriteFile(file, []byte(appRules), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, args := range map[string][]string{
		"the guide's counters": nil,
		"a public like button": {"--counts", "posts:likes=count(likes)", "--rules", file},
		"likes as votes":       {"--public", "--auth", "firebase", "--votes-only", "--app-check", "--counts", "posts:likes", "--signed-in-reads"},
		"counts on posts":      {"--counts", "posts:likes,views,comments=count(comments)"},
		"the extension's":      {"--counts", "posts:likes", "--extension-counters", "pages:likes,stats.views"},
		"the app's rules file": {"--counts", "posts:likes", "--rules", file},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			api := rulesapi.New(t)
			release := ReleaseName("demo-proj", "(default)")
			api.Put(release, appRules)
			out := deployDry(t, api.URL, append(base, args...)...)
			diff, publish := diffOf(out), publishLine(t, out)
			for _, l := range strings.Split(diff, "\n") {
				if strings.HasPrefix(l, "-") && !strings.HasPrefix(l, "---") {
					t.Errorf("the dry run's diff removes a line of the app's: %q", l)
				}
			}
			if !strings.Contains(diff, "+"+mergeBegin) {
				t.Errorf("the dry run's diff adds no part of tally's:\n%s", out)
			}
			for range 2 {
				if b, err := runWith(api.URL, publish); err != nil {
					t.Fatalf("%s: %v\n%s", publish, err, b)
				}
			}
			live := api.Live(release)
			for _, l := range strings.Split(appRules, "\n") {
				if !strings.Contains(live, l) {
					t.Errorf("the rules published lack the app's line %q:\n%s", l, live)
				}
			}
			if n := strings.Count(live, mergeBegin); n != 1 {
				t.Errorf("the rules published hold tally's part %d times, want once:\n%s", n, live)
			}
		})
	}
	api := rulesapi.New(t)
	release := ReleaseName("demo-proj", "(default)")
	api.Put(release, appRules)
	b, err := runWith(api.URL, os.Getenv("TALLY_BIN")+" rules --project demo-proj --publish")
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(b), "not tally's alone") || api.Live(release) != appRules {
		t.Errorf("tally rules --publish alone, over the app's rules: %v\n%s; want refused, exit 2, the app's rules in force", err, b)
	}
	tallys, _ := Rules(RulesOptions{})
	api.Put(release, tallys+"\n") // an earlier tally's, alone
	if b, err := runWith(api.URL, os.Getenv("TALLY_BIN")+" rules --project demo-proj --signed-in-reads --publish"); err != nil ||
		!strings.Contains(api.Live(release), "allow read: if request.auth != null") {
		t.Errorf("tally rules --publish over tally's own rules: %v\n%s; want them replaced", err, b)
	}
}

// deployDry runs deploy.sh --dry-run with args, its rules read from the
// stand-in at api, and answers all it printed.
func deployDry(t *testing.T, api string, args ...string) string {
	t.Helper()
	cmd := exec.Command("bash", append([]string{"deploy.sh", "--dry-run"}, args...)...)
	cmd.Env = append(os.Environ(), "TALLY_RULES_API="+api)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("deploy.sh --dry-run %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// diffOf is the diff a dry run printed of the rules.
func diffOf(out string) string {
	_, after, _ := strings.Cut(out, "# what it changes of them")
	d, _, _ := strings.Cut(after, "\ngo run ./cmd/tally rules")
	return d
}

// publishLine is the command a dry run printed to publish the rules, to
// run with the tally already built.
func publishLine(t *testing.T, out string) string {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "go run ./cmd/tally rules ") && strings.HasSuffix(l, " --publish") {
			return os.Getenv("TALLY_BIN") + strings.TrimPrefix(l, "go run ./cmd/tally")
		}
	}
	t.Fatalf("the dry run prints no command publishing the rules:\n%s", out)
	return ""
}

// runWith runs a command line of a shell in the repository's root, its
// rules read and published through the stand-in at api.
func runWith(api, line string) ([]byte, error) {
	cmd := exec.Command("bash", "-c", line)
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), "TALLY_RULES_API="+api, "FIRESTORE_EMULATOR_HOST=")
	return cmd.CombinedOutput()
}
