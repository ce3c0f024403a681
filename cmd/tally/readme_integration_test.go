package main

import (
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/testkit/testio"
)

// TestReadmeServeAndSessions starts tally serve and checks the README
// against it: its ready banner, the CLI session (each command run, its
// output compared), the watch that ran beside it, and the quickstart.
func TestReadmeServeAndSessions(t *testing.T) {
	t.Parallel()
	// As on a new user's machine: no project set.
	cmd, out, stderr := start(t, []string{"TALLY_SHARD_CACHE_TTL=300ms", "GOOGLE_CLOUD_PROJECT="}, "serve", "--port", "0")
	r := waitReady(t, out, stderr)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("serve's stderr:\n%s\nand its output after the banner:\n%s", stderr, r.later)
		}
	})
	banner := r.lines
	for deadline := time.Now().Add(emulatortest.Liveness); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if later := strings.Split(strings.TrimSpace(r.later.String()), "\n"); len(later) >= 3 {
			banner = append(banner, later[:3]...) // the example after FIRESTORE_EMULATOR_HOST: a comment, then two commands
			break
		}
	}
	if got, want := normalize(strings.Join(banner, "\n")), normalize(readme(t, "serve banner")); got != want {
		t.Errorf("serve printed:\n%s\nthe README says:\n%s", got, want)
	}
	emulatorAddr := r.emulator
	functionsAddr := strings.TrimPrefix(r.functions, "http://")
	env := []string{"FIRESTORE_EMULATOR_HOST=" + emulatorAddr, "GOOGLE_CLOUD_PROJECT=", "TALLY_SHARD_CACHE_TTL=300ms"}

	watch := tallyCommand("", []string{"FIRESTORE_EMULATOR_HOST=" + emulatorAddr}, "watch", "likes")
	var watched, watchErr testio.Buffer
	watch.Stdout, watch.Stderr = &watched, &watchErr
	if err := watch.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { watch.Process.Kill(); watch.Wait() }()
	for deadline := time.Now().Add(emulatortest.Liveness); !strings.Contains(watched.String(), "likes 0") && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
	}

	runStep := stepRunner(t, env, functionsAddr, emulatorAddr)
	check := func(block string) {
		for _, s := range session(block) {
			if strings.Contains(s.command, "updateMask.fieldPaths") {
				// The step overwrites the total behind the rollup's back,
				// and the next steps show it: wait until the rollup has
				// folded the events it still holds (the increments'), or
				// its fold would overwrite the step's total first. The
				// session reshards after it: a reshard's deletes are events
				// no wait can see the end of.
				waitFolded(t, emulatorAddr, "likes")
			}
			want := normalize(s.output)
			var got string
			// The rollup may still be folding: a total is read again until it
			// has caught up (a liveness bound, not a measurement).
			for deadline := time.Now().Add(emulatortest.Liveness); ; time.Sleep(200 * time.Millisecond) {
				if got = normalize(runStep(s)); got == want || time.Now().After(deadline) ||
					!strings.Contains(s.command, "get likes") && !strings.Contains(s.command, "mask.fieldPaths") {
					break
				}
			}
			if got != want {
				t.Errorf("$ %s\ngave:\n%s\nthe README says:\n%s", s.command, got, want)
			}
		}
	}
	check(readme(t, "cli session"))

	watch.Process.Signal(syscall.SIGINT)
	watch.Wait()
	var totals []string
	for _, line := range strings.Split(strings.TrimSpace(watched.String()), "\n") {
		totals = append(totals, strings.TrimPrefix(line, "likes "))
	}
	if i := slices.Index(totals, "17"); i < 0 || !slices.Equal(totals[i:], []string{"17", "999", "17", "0"}) || totals[0] != "0" {
		t.Errorf("watch printed %v; the README says 0, the totals on the way to 17, then 999, 17, 0", totals)
	}
	if want := "tally watch: there is no counter likes yet: 'tally create likes' makes one; until then it reads 0"; !strings.Contains(watchErr.String(), want) {
		t.Errorf("watch, started before the counter was made, said %q; want %q", watchErr.String(), want)
	}

	check(readme(t, "quickstart"))
	cmd.Process.Signal(syscall.SIGTERM)
	waitExit(t, cmd)
}

// TestReadmeCounts runs serve with counts on documents as the README starts
// it, and the README's session against it.
func TestReadmeCounts(t *testing.T) {
	t.Parallel()
	line := "TALLY_COUNTS='posts:likes,views;users/*/posts:likes' go run ./cmd/tally serve"
	if !strings.Contains(readmeText(t), "\n"+line+"\n") {
		t.Fatalf("the README no longer starts serve with %s", line)
	}
	counts := "TALLY_COUNTS=posts:likes,views;users/*/posts:likes"
	_, out, stderr := start(t, []string{counts, "GOOGLE_CLOUD_PROJECT="}, "serve", "--port", "0")
	r := waitReady(t, out, stderr)
	if !strings.Contains(strings.Join(r.lines, "\n"), "enforcing deploy/counts.rules") {
		t.Errorf("serve does not say which rules it enforces:\n%s", strings.Join(r.lines, "\n"))
	}
	for deadline := time.Now().Add(emulatortest.Liveness); !strings.Contains(r.later.String(), "documents/posts/counts?mask.fieldPaths=likes") && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
	}
	// On one of the demo's posts, which serve adds to an empty feed.
	if later := r.later.String(); !strings.Contains(later, `{"counter":"posts/counts","field":"likes"}`) {
		t.Errorf("serve's examples are not for the counts declared, on a post that exists:\n%s", later)
	}
	runSession(t, r, counts, "counts session", "tally get")
}

// runSession runs the README's session name against the serve r, with
// counts in the tally commands' environment. The rollup may still be
// folding: a command starting with again is run again until it gives what
// the README shows (a liveness bound, not a measurement).
func runSession(t *testing.T, r ready, counts, name, again string) {
	t.Helper()
	env := []string{"FIRESTORE_EMULATOR_HOST=" + r.emulator, "GOOGLE_CLOUD_PROJECT=", counts}
	runStep := stepRunner(t, env, strings.TrimPrefix(r.functions, "http://"), r.emulator)
	for _, s := range session(readme(t, name)) {
		want := normalize(s.output)
		var got string
		for deadline := time.Now().Add(emulatortest.Liveness); ; time.Sleep(200 * time.Millisecond) {
			if got = normalize(runStep(s)); got == want || time.Now().After(deadline) || !strings.HasPrefix(s.command, again) {
				break
			}
		}
		if got != want {
			t.Errorf("$ %s\ngave:\n%s\nthe README says:\n%s", s.command, got, want)
		}
	}
}

// TestReadmeRank runs the README's leaderboard: serve with posts ranked by
// likes, a like of one of the demo's posts, and its place, as the README
// shows them.
func TestReadmeRank(t *testing.T) {
	t.Parallel()
	counts := "TALLY_COUNTS=posts:likes,rank(likes)"
	if !strings.Contains(readmeText(t), "`TALLY_COUNTS='posts:likes,rank(likes)'`") {
		t.Fatalf("the README no longer starts serve with %s", counts)
	}
	_, out, stderr := start(t, []string{counts, "GOOGLE_CLOUD_PROJECT="}, "serve", "--port", "0")
	r := waitReady(t, out, stderr)
	// The shell has serve's FIRESTORE_EMULATOR_HOST and no TALLY_COUNTS:
	// the command reads what serve declared.
	runSession(t, r, "GOOGLE_CLOUD_PROJECT=", "rank session", "go run ./cmd/tally rank")
}

// TestReadmeWindows runs the README's counts by time: serve as it starts
// it, a view of a demo post, and its views today read by the command from
// a shell with only serve's FIRESTORE_EMULATOR_HOST.
func TestReadmeWindows(t *testing.T) {
	t.Parallel()
	env := []string{"TALLY_COUNTS=posts:likes,views,views_today=views per day,views_7d=views over 7 days,hot=trend(likes + views/10, 6h)",
		"TALLY_TIME_ZONE=Europe/Paris", "GOOGLE_CLOUD_PROJECT="}
	if !strings.Contains(readmeText(t), "TALLY_COUNTS='"+strings.TrimPrefix(env[0], "TALLY_COUNTS=")+"' TALLY_TIME_ZONE=Europe/Paris go run ./cmd/tally serve") {
		t.Fatalf("the README no longer starts serve with %s", env[0])
	}
	_, out, stderr := start(t, env, "serve", "--port", "0")
	r := waitReady(t, out, stderr)
	runSession(t, r, "GOOGLE_CLOUD_PROJECT=", "windows session", "go run ./cmd/tally get")
}

// TestReadmeDeploy: the deploy commands the README shows are what the dry
// run prints.
func TestReadmeDeploy(t *testing.T) {
	t.Parallel()
	emulatortest.Long(t, "runs deploy.sh, which builds the tally command")
	cmd := exec.Command("bash", "deploy/deploy.sh", "--dry-run", "--project", "demo-proj", "--region", "us-central1", "--database-location", "nam5")
	cmd.Dir = "../.."
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, line := range strings.Split(strings.TrimSpace(readme(t, "deploy")), "\n") {
		if !strings.Contains(string(out), line) {
			t.Errorf("the dry run does not print the README's\n%s", line)
		}
	}
}
