package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tallycounters/tally/internal/testkit/emulatortest"
)

// TestBannerCommands runs the commands serve prints, as printed, in a
// clean shell (no variable of the test's, none of serve's) in the
// directory serve was started in: with sign-in on, they get a token from
// 'tally token' first, run as serve was (go run of cmd/tally from there,
// as from examples/like-button, where the starter app's npm start runs
// serve); with counts declared, they name a document that exists (a demo
// post), or make one first where none does. The increment must count,
// and the read must show it once its fold lands (a second later on an
// idle machine); with a window declared, tally get and tally series, as
// printed, must show it in the window, reading what serve declared with
// no TALLY_COUNTS of their own.
func TestBannerCommands(t *testing.T) {
	emulatortest.Require(t)
	t.Parallel()
	for _, c := range []struct {
		name   string
		dir    string // where serve starts, from the repository's root
		env    []string
		doc    string // the document the commands count on
		readme string // the README's block of these commands, if any
		window string // the window the commands read, if any
		flags  []string
	}{
		{"signed in, from the starter app", "examples/like-button", []string{"TALLY_AUTH=firebase"}, "counters/likes", "", "", nil},
		{"signed in, on a demo post", ".", []string{"TALLY_AUTH=firebase", "TALLY_COUNTS=posts:likes,views,comments=count(comments)"}, "posts/counts", "auth banner", "", nil},
		{"on a document the commands make", ".", []string{"TALLY_COUNTS=shops/*/products:stock"}, "shops/u1/products/p1", "", "", nil},
		{"counts by time", ".", []string{"TALLY_COUNTS=posts:likes,views,views_today=views per day,views_7d=views over 7 days", "TALLY_TIME_ZONE=Europe/Paris"},
			"posts/counts", "", "views_today", nil},
		// the extension's client writes its own shard, which Rollup moves
		{"as the extension's clients", ".", nil, "pages/home", "", "", []string{"--extension-counters", "pages:stats.views,likes"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join("..", "..", c.dir)
			cmd, out, stderr := startIn(t, dir, c.env, append([]string{"serve", "--port", "0"}, c.flags...)...)
			last := "mask.fieldPaths="
			switch {
			case c.window != "":
				last = " series "
			case c.flags != nil:
				last = "/documents/pages/home?mask.fieldPaths="
			}
			r := waitReady(t, out, stderr)
			lines := bannerExample(t, r, last)
			script := strings.Join(lines, "\n")
			if c.readme != "" {
				if got, want := normalize(script), normalize(readme(t, c.readme)); got != want {
					t.Errorf("serve printed:\n%s\nthe README says:\n%s", got, want)
				}
			}
			if !strings.Contains(script, "/documents/"+c.doc+"?") {
				t.Fatalf("serve's commands are not on %s:\n%s", c.doc, script)
			}
			// The tally the commands run is this test's binary, in place of
			// go run of cmd/tally as it is from dir.
			if run := regexp.MustCompile(`go run (\S+)`).FindStringSubmatch(script); run != nil {
				if _, err := os.Stat(filepath.Join(dir, run[1], "main.go")); err != nil {
					t.Errorf("serve, started in %s, prints %q: %v", c.dir, run[0], err)
				}
				script = strings.ReplaceAll(script, run[0], "TALLY_TEST_MAIN=1 "+os.Args[0])
			}
			b := cleanShell(t, dir, script)
			if !strings.Contains(b, `"changed":true`) {
				t.Fatalf("serve's commands did not count:\n%s\ngave:\n%s", script, b)
			}
			if c.flags != nil && !strings.Contains(b, `"commitTime"`) {
				t.Fatalf("the extension's client's write was refused:\n%s\ngave:\n%s", script, b)
			}
			// The read a second later shows the count once its fold has
			// landed: within the second on an idle machine, later on a
			// busy one. Each read line is run again until it shows it.
			lines = strings.Split(script, "\n")
			for _, l := range lines {
				switch {
				case strings.HasPrefix(l, "#"): // what the lines do
				case strings.Contains(l, "mask.fieldPaths="):
					readUntil(t, dir, strings.TrimPrefix(l, "sleep 1; "), regexp.MustCompile(`"integerValue": "1"`))
				case strings.Contains(l, " get "):
					readUntil(t, dir, l, regexp.MustCompile(regexp.QuoteMeta(c.doc+" "+c.window+" 1")))
				case strings.Contains(l, " series "):
					readUntil(t, dir, l, regexp.MustCompile(`(?m)^bucket starts \(Europe/Paris\)\s+views_7d\n(.*CES?T\s+0\n)*.*CES?T\s+1\n?$`))
				}
			}
			if c.flags != nil && !r.printed(`"message":"rollup: move","document":"pages/home","shards":1`) {
				t.Errorf("serve logged no move of pages/home's shard:\n%s", r.later)
			}
			cmd.Process.Signal(syscall.SIGTERM)
			waitExit(t, cmd)
		})
	}
}

// bannerExample waits for the commands the banner prints after the
// emulator's address, up to the one that holds last (the read of the
// count, or with a window, its series), and answers them without the log
// lines between.
func bannerExample(t *testing.T, r ready, last string) []string {
	t.Helper()
	// The wait is for the command, not the comment above the commands,
	// which may name it too ("... and the series of views_7d"): a banner
	// read only up to its comment has no increment in it.
	if !r.printedLine(func(l string) bool { return !strings.HasPrefix(l, "#") && strings.Contains(l, last) }) {
		t.Fatalf("serve printed no example ending in %q:\n%s", last, r.later)
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(r.later.String()), "\n") {
		if !strings.HasPrefix(l, "{") {
			lines = append(lines, l)
		}
	}
	return lines
}

// readUntil runs line in a clean shell in dir until its output matches
// want, for at most emulatortest.Liveness (a liveness bound).
func readUntil(t *testing.T, dir, line string, want *regexp.Regexp) {
	t.Helper()
	var out string
	for deadline := time.Now().Add(emulatortest.Liveness); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if out = cleanShell(t, dir, line); want.MatchString(out) {
			return
		}
	}
	t.Fatalf("serve's\n%s\nnever gave what it should (%s); last:\n%s", line, want, out)
}

// cleanShell runs script with bash in dir, with no environment but PATH
// and HOME, and answers its output.
func cleanShell(t *testing.T, dir, script string) string {
	t.Helper()
	sh := exec.Command("bash", "-c", script)
	// TALLY_TEST_MAIN keeps this test binary the tally command wherever
	// the script runs it (a binary built with go test -c prints its own
	// path, not go run): without it, it would run the tests again.
	sh.Dir, sh.Env = dir, []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "TALLY_TEST_MAIN=1"}
	b, _ := sh.CombinedOutput()
	return string(b)
}
