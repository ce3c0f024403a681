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

// TestBannerCommands runs the commands serve prints, as printed, in one
// shell in the directory serve was started in: with sign-in on, they get
// a token from 'tally token' first, run as serve was (go run of cmd/tally
// from there, as from examples/like-button, where the starter app's npm
// start runs serve); with counts declared, they name a document that
// exists (a demo post), or make one first where none does. The increment
// must count, and the read must show it.
func TestBannerCommands(t *testing.T) {
	emulatortest.Require(t)
	t.Parallel()
	for _, c := range []struct {
		name   string
		dir    string // where serve starts, from the repository's root
		env    []string
		doc    string // the document the commands count on
		readme string // the README's block of these commands, if any
	}{
		{"signed in, from the starter app", "examples/like-button", []string{"TALLY_AUTH=firebase"}, "counters/likes", ""},
		{"signed in, on a demo post", ".", []string{"TALLY_AUTH=firebase", "TALLY_COUNTS=posts:likes,views,comments=count(comments)"}, "posts/counts", "auth banner"},
		{"on a document the commands make", ".", []string{"TALLY_COUNTS=shops/*/products:stock"}, "shops/u1/products/p1", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join("..", "..", c.dir)
			cmd, out, stderr := startIn(t, dir, c.env, "serve", "--port", "0")
			r := waitReady(t, out, stderr)
			var lines []string
			for deadline := time.Now().Add(emulatortest.Liveness); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
				if later := r.later.String(); strings.Contains(later, "mask.fieldPaths=") {
					lines = strings.Split(strings.TrimSpace(later), "\n")
					break
				}
			}
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
			sh := exec.Command("bash", "-c", script)
			sh.Dir = dir
			b, _ := sh.CombinedOutput()
			if !strings.Contains(string(b), `"changed":true`) {
				t.Fatalf("serve's commands did not count:\n%s\ngave:\n%s", script, b)
			}
			read := lines[len(lines)-1]
			for deadline := time.Now().Add(emulatortest.Liveness); ; time.Sleep(200 * time.Millisecond) {
				b, _ = exec.Command("bash", "-c", read).CombinedOutput()
				if strings.Contains(string(b), `"integerValue": "1"`) {
					break // folded: the read shows the count the commands made
				}
				if time.Now().After(deadline) {
					t.Fatalf("serve's read never showed the increment:\n%s\ngave:\n%s", read, b)
				}
			}
			cmd.Process.Signal(syscall.SIGTERM)
			waitExit(t, cmd)
		})
	}
}
