package deploy

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/testkit/rulesapi"
)

// tool finds a program the tests need, or fails saying how to install it.
func tool(t *testing.T, name, install string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s is not installed: %s", name, install)
	}
	return p
}

// dryRun runs deploy.sh --dry-run with args and returns its command lines.
func dryRun(t *testing.T, args ...string) []string {
	t.Helper()
	out, err := exec.Command("bash", append([]string{"deploy.sh", "--dry-run"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("deploy.sh --dry-run %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	var cmds []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if line := sc.Text(); line != "" && !strings.HasPrefix(line, "#") {
			cmds = append(cmds, line)
		}
	}
	return cmds
}

// gcloudEnv is a gcloud with no account, no prompts and no update check:
// it parses a command and stops, before any network, for want of credentials.
func gcloudEnv(t *testing.T) []string {
	return append(os.Environ(),
		"CLOUDSDK_CONFIG="+t.TempDir(),
		"CLOUDSDK_CORE_DISABLE_PROMPTS=1",
		"CLOUDSDK_COMPONENT_MANAGER_DISABLE_UPDATE_CHECK=1",
		"CLOUDSDK_CORE_ACCOUNT=",
	)
}

// parse runs one printed gcloud command as a shell would read it. It
// reports whether gcloud accepted its arguments: a valid command fails only
// for want of an account.
func parse(t *testing.T, env []string, line string) (ok bool, out string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", line)
	cmd.Env = env
	b, err := cmd.CombinedOutput()
	out = string(b)
	code := 0
	if ee, isExit := err.(*exec.ExitError); isExit {
		code = ee.ExitCode()
	}
	usage := code == 2 || strings.Contains(out, "unrecognized arguments") || strings.Contains(out, "Invalid choice")
	noAccount := strings.Contains(out, "You do not currently have an active account selected")
	return !usage && noAccount, out
}

var variants = map[string][]string{
	"public, scheduled": {"--project", "demo-proj", "--region", "us-central1", "--database-location", "nam5",
		"--public", "--reconcile-schedule", "--cors-origins", "https://a.example,https://b.example"},
	"private, named database": {"--project", "demo-proj", "--region", "europe-west1", "--database", "tallies",
		"--database-location", "eur3", "--signed-in-reads", "--collection", "votes", "--shard-field", "Count"},
	"public, signed in": {"--project", "demo-proj", "--region", "us-central1", "--database-location", "nam5",
		"--public", "--auth", "firebase", "--counter-pattern", "(likes|views)-[0-9]+", "--cors-origins", "https://app.example",
		"--votes-only", "--app-check", "--public-rate", "5/m", "--public-user-rate=50/h"},
	"counts on documents": {"--project", "demo-proj", "--region", "us-central1", "--database-location", "nam5",
		"--counts", "posts:likes,views;users/*/posts:likes;polls/*/options:votes", "--shards-collection", "tally_shards",
		"--public", "--auth", "firebase", "--votes-only"},
	"counts by time": {"--project", "demo-proj", "--region", "us-central1", "--database-location", "nam5", "--time-zone", "Europe/Paris",
		"--counts", `posts:views,likes,views_today=views per day,views_7d=views over 7 days,hot=trend(likes + views/10, 6h);users/*/posts:likes,likes_hour=likes per hour`},
	"aggregates": {"--project", "demo-proj", "--region", "us-central1", "--database-location", "nam5",
		"--counts", `posts:likes,comments=count(comments),shown=count(comments where hidden == false and lang == "en"),score=sum(comments.score);stats/site:users=count(/users)`},
	"delete, counts on documents": {"--project", "demo-proj", "--region", "us-central1", "--database-location", "nam5",
		"--counts", "posts:likes,views;users/*/posts:likes;polls/*/options:votes", "--reconcile-schedule", "--delete"},
	"extension counters": {"--project", "demo-proj", "--region", "us-central1", "--database-location", "nam5",
		"--counts", "posts:likes", "--extension-counters", "pages:likes,stats.views;posts:likes"},
	"quiet documents, Increment billed by instance": {"--project", "demo-proj", "--region", "us-central1", "--database-location", "nam5",
		"--counts", "posts:likes,views", "--quiet-in-document", "--increment-billing", "instance"},
	"quiet documents, small Increment instances": {"--project", "demo-proj", "--region", "us-central1", "--database-location", "nam5",
		"--counts", "posts:likes,views", "--quiet-in-document", "--increment-cpu", "0.167"},
	"flags with =": {"--project=demo-proj", "--region=asia-northeast1", "--database-location=asia-northeast1",
		"--window=500ms", "--rollup-max-instances=20", "--cors-origins=https://a.example"},
}

// TestDryRunParsesWithGcloud checks every gcloud command of the dry run,
// of each variant, against the installed gcloud's own argument parser,
// offline. A command that several variants print alike is parsed once, and
// two are parsed at a time.
func TestDryRunParsesWithGcloud(t *testing.T) {
	t.Parallel()
	emulatortest.Without(t, "gcloud")
	tool(t, "gcloud", "install the Google Cloud CLI (Debian package google-cloud-cli)")
	env := gcloudEnv(t)
	var lines []string
	seen := map[string]bool{}
	for name, args := range variants {
		n := 0
		for _, line := range dryRun(t, args...) {
			if !strings.HasPrefix(line, "gcloud ") {
				continue
			}
			n++
			if !seen[line] {
				seen[line] = true
				lines = append(lines, line)
			}
		}
		if n < 8 {
			t.Errorf("%s: the dry run printed %d gcloud commands", name, n)
		}
	}
	sem := make(chan struct{}, 2)
	var wg sync.WaitGroup
	for _, line := range lines {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			if ok, out := parse(t, env, line); !ok {
				t.Errorf("gcloud rejects:\n  %s\n%s", line, lastLines(out, 6))
			}
		}()
	}
	wg.Wait()
}

// TestDeployCounts: with --counts, Rollup is triggered on the shards of
// every counted collection (the function's own trigger, then one Eventarc
// trigger per further collection, on the same service), the functions get
// TALLY_COUNTS, and the app's rules are printed for it to merge, never
// published over its own.
func TestDeployCounts(t *testing.T) {
	t.Parallel()
	emulatortest.Long(t, "runs deploy.sh, which builds the tally command")
	lines := strings.Join(dryRun(t, variants["counts on documents"]...), "\n")
	for _, want := range []string{
		"--entry-point=Rollup", "'--trigger-event-filters-path-pattern=document=posts/{doc0}/lives/{life}/tally_shards/{shardId}'",
		"gcloud eventarc triggers create tally-rollup-1 ", "'--event-filters-path-pattern=document=users/{doc0}/posts/{doc1}/lives/{life}/tally_shards/{shardId}'",
		"gcloud eventarc triggers create tally-rollup-2 ", "'--event-filters-path-pattern=document=polls/{doc0}/options/{doc1}/lives/{life}/tally_shards/{shardId}'",
		"--destination-run-service=tally-rollup", "--event-data-content-type=application/protobuf",
		"TALLY_COUNTS=posts:likes,views;users/*/posts:likes;polls/*/options:votes", "TALLY_SHARDS_COLLECTION=tally_shards",
		"go run ./cmd/tally rules ", "'--counts=posts:likes,views;users/*/posts:likes;polls/*/options:votes'",
	} {
		if !strings.Contains(lines, want) {
			t.Errorf("the dry run lacks %s", want)
		}
	}
	if strings.Contains(lines, "tally-rollup-3") || strings.Contains(lines, "rules --publish") && strings.Contains(lines, "--counts=") {
		t.Errorf("one trigger too many, or the app's rules published over:\n%s", lines)
	}
	out, err := exec.Command("bash", "deploy.sh", "--dry-run", "--project", "p", "--region", "us-central1",
		"--database-location", "nam5", "--counts", "posts:1likes").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "TALLY_COUNTS") {
		t.Errorf("a bad --counts: %v\n%s", err, out)
	}
}

// TestDeployExtensionCounters: --extension-counters has Rollup take the
// creation and the update of the extension's shards under each declared
// document, on two Eventarc triggers a declaration, named for their
// event types, tells the functions the declaration, and has the rules
// printed with the extension clients' part for it.
func TestDeployExtensionCounters(t *testing.T) {
	t.Parallel()
	emulatortest.Long(t, "runs deploy.sh, which builds the tally command")
	lines := strings.Join(dryRun(t, variants["extension counters"]...), "\n")
	for _, want := range []string{
		"gcloud eventarc triggers create tally-rollup-created-2 ", "gcloud eventarc triggers create tally-rollup-updated-3 ",
		"gcloud eventarc triggers create tally-rollup-created-4 ", "gcloud eventarc triggers create tally-rollup-updated-5 ",
		"--event-filters=type=google.cloud.firestore.document.v1.updated",
		"'--event-filters-path-pattern=document=pages/{doc0}/_counter_shards_/{shard}'",
		"'--event-filters-path-pattern=document=posts/{doc0}/_counter_shards_/{shard}'",
		"~~TALLY_EXTENSION_COUNTERS=pages:likes,stats.views;posts:likes",
		"'--extension-counters=pages:likes,stats.views;posts:likes'",
	} {
		if !strings.Contains(lines, want) {
			t.Errorf("the dry run lacks %s", want)
		}
	}
	if strings.Contains(lines, "tally-rollup-6") || strings.Contains(lines, "document.v1.deleted") || strings.Contains(lines, "{document=**}") {
		t.Errorf("a trigger too many:\n%s", lines)
	}
}

// TestRollupScalesOut: Rollup is deployed to run on many instances, each
// holding up to Cloud Run's 1,000 requests; --rollup-max-instances sets how
// many.
func TestRollupScalesOut(t *testing.T) {
	t.Parallel()
	emulatortest.Long(t, "runs deploy.sh, which builds the tally command")
	rollupLine := func(args ...string) string {
		for _, line := range dryRun(t, args...) {
			if strings.Contains(line, "--entry-point=Rollup") {
				return line
			}
		}
		t.Fatal("no Rollup deploy")
		return ""
	}
	base := variants["public, scheduled"]
	if line := rollupLine(base...); !strings.Contains(line, " --max-instances=100 ") || !strings.Contains(line, " --concurrency=1000 ") {
		t.Errorf("Rollup deploy: %s\nwant --max-instances=100 --concurrency=1000", line)
	}
	if line := rollupLine(append(base, "--rollup-max-instances", "20")...); !strings.Contains(line, " --max-instances=20 ") {
		t.Errorf("--rollup-max-instances 20: %s", line)
	}
	out, err := exec.Command("bash", append([]string{"deploy.sh", "--dry-run", "--rollup-max-instances", "0"}, base...)...).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "--rollup-max-instances") {
		t.Errorf("--rollup-max-instances 0 was taken: %s", out)
	}
}

// TestParseCatchesBrokenFlag shows that the check above fails a command
// whose flag is misspelt.
func TestParseCatchesBrokenFlag(t *testing.T) {
	t.Parallel()
	emulatortest.Long(t, "runs deploy.sh, which builds the tally command")
	tool(t, "gcloud", "install the Google Cloud CLI (Debian package google-cloud-cli)")
	env := gcloudEnv(t)
	var deployLine string
	for _, line := range dryRun(t, variants["public, scheduled"]...) {
		if strings.Contains(line, "--entry-point=Rollup") {
			deployLine = line
		}
	}
	for old, bad := range map[string]string{
		"--trigger-event-filters-path-pattern": "--trigger-event-filter-path-pattern",
		"--retry":                              "--retries",
		"--concurrency=1000":                   "--concurrency=lots",
	} {
		broken := strings.Replace(deployLine, old, bad, 1)
		if broken == deployLine {
			t.Fatalf("the Rollup deploy has no %s", old)
		}
		if ok, out := parse(t, env, broken); ok {
			t.Errorf("a command with %s passed the check:\n%s", bad, lastLines(out, 4))
		}
	}
}

// TestDryRunRulesCommand runs the printed rules command without --publish,
// on a project with no rules in force (a stand-in of the Rules API): its
// flags parse and it renders the rules.
func TestDryRunRulesCommand(t *testing.T) {
	t.Parallel()
	emulatortest.Long(t, "runs deploy.sh, which builds the tally command")
	api := rulesapi.New(t)
	for name, args := range variants {
		for _, line := range dryRun(t, args...) {
			if !strings.HasPrefix(line, "go run ./cmd/tally rules") {
				continue
			}
			out, err := runWith(api.URL, strings.Replace(line, " --publish", "", 1))
			if err != nil || !strings.Contains(string(out), "service cloud.firestore") {
				t.Errorf("%s: %s: %v\n%s", name, line, err, out)
			}
		}
	}
}

func TestScriptRejectsBadArguments(t *testing.T) {
	t.Parallel()
	emulatortest.Long(t, "runs deploy.sh, which builds the tally command")
	base := []string{"--project", "p", "--region", "us-central1", "--database-location", "nam5"}
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"--region", "us-central1", "--database-location", "nam5"}, "required"},
		{[]string{"--project", "p", "--region", "nam5", "--database-location", "nam5"}, "--region"},
		{append(base, "--frobnicate"), "unknown argument"},
		{[]string{"--project"}, "needs a value"},
		{append(base, "--public=true"), "takes no value"},
		// Values the functions would refuse are refused here, by the same code.
		{append(base, "--window", "5"), "TALLY_ROLLUP_WINDOW"},
		{append(base, "--window=soon"), "TALLY_ROLLUP_WINDOW"},
		{append(base, "--shard-field", "a.b"), "TALLY_SHARD_FIELD"},
		{append(base, "--collection=a/b"), "TALLY_COLLECTION"},
		{append(base, "--database", "Bad_DB"), "TALLY_DATABASE"},
		{append(base, "--auth", "password"), "TALLY_AUTH"},
		{append(base, "--public", "--counter-pattern", "(unclosed"), "TALLY_COUNTER_PATTERN"},
		{append(base, "--public", "--public-max-step", "0"), "TALLY_PUBLIC_MAX_STEP"},
		{append(base, "--increment-cpu", "0.05"), "--increment-cpu"},
		{append(base, "--increment-cpu", "half"), "--increment-cpu"},
		{append(base, "--increment-cpu", "0.5", "--increment-billing", "instance"), "by request only"},
	} {
		cmd := exec.Command("bash", append([]string{"deploy.sh", "--dry-run"}, tc.args...)...)
		cmd.Env = append(os.Environ(), "TALLY_MAX_STEP=not-passed-on") // the shell's own TALLY_* do not count
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), tc.says) {
			t.Errorf("deploy.sh %v: %v, want exit status 2 saying %q:\n%s", tc.args, err, tc.says, out)
		}
		if strings.Contains(string(out), "gcloud functions deploy") {
			t.Errorf("deploy.sh %v printed a deploy before failing", tc.args)
		}
	}
}

// TestPublicWarns: --public without --auth firebase says what anyone may
// then do; with it, no warning. Either way the function is told it is
// public, and the keys' records get their TTL policy.
func TestPublicWarns(t *testing.T) {
	t.Parallel()
	emulatortest.Long(t, "runs deploy.sh, which builds the tally command")
	base := []string{"--project", "p", "--region", "us-central1", "--database-location", "nam5", "--public"}
	for _, tc := range []struct {
		args []string
		warn bool
	}{
		{base, true},
		{append(base, "--auth", "firebase"), false},
	} {
		out, err := exec.Command("bash", append([]string{"deploy.sh", "--dry-run"}, tc.args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %v\n%s", tc.args, err, out)
		}
		text := string(out)
		if warned := strings.Contains(text, "warning: --public without --auth firebase"); warned != tc.warn {
			t.Errorf("%v: warned %v, want %v:\n%s", tc.args, warned, tc.warn, text)
		}
		for _, want := range []string{"TALLY_PUBLIC=true", "gcloud firestore fields ttls update expires_at --collection-group=keys --enable-ttl"} {
			if !strings.Contains(text, want) {
				t.Errorf("%v: the dry run lacks %q", tc.args, want)
			}
		}
	}
}

func TestShellcheck(t *testing.T) {
	t.Parallel()
	emulatortest.Without(t, "shellcheck")
	sc := tool(t, "shellcheck", "apt-get install shellcheck")
	for _, f := range []string{"deploy.sh", "delete.sh", filepath.Join("..", ".ci", "run")} {
		if out, err := exec.Command(sc, "-x", f).CombinedOutput(); err != nil {
			t.Errorf("shellcheck %s: %v\n%s", f, err, out)
		}
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// TestDeployQuietPath: --quiet-in-document sets TALLY_QUIET_IN_DOCUMENT on
// the functions, and --increment-billing instance has Increment's service
// billed by instance after its deploy; by default neither is there.
// --increment-cpu below one deploys Increment at that size taking one
// request at a time; by default, one vCPU taking 80.
func TestDeployQuietPath(t *testing.T) {
	t.Parallel()
	base := []string{"--project", "demo-proj", "--region", "us-central1", "--database-location", "nam5", "--counts", "posts:likes,views"}
	for _, c := range []struct {
		args   []string
		quiet  bool
		always bool
		size   string
	}{
		{nil, false, false, "--cpu=1 --concurrency=80"},
		{[]string{"--quiet-in-document", "--increment-billing", "instance"}, true, true, "--cpu=1 --concurrency=80"},
		{[]string{"--increment-billing=request"}, false, false, "--cpu=1 --concurrency=80"},
		{[]string{"--quiet-in-document", "--increment-cpu", "0.167"}, true, false, "--cpu=0.167 --concurrency=1"},
		{[]string{"--increment-cpu=.08"}, false, false, "--cpu=.08 --concurrency=1"},
	} {
		out := strings.Join(dryRun(t, append(slices.Clone(base), c.args...)...), "\n")
		if quiet := strings.Contains(out, "TALLY_QUIET_IN_DOCUMENT=true"); quiet != c.quiet {
			t.Errorf("%v: TALLY_QUIET_IN_DOCUMENT=true set: %v, want %v", c.args, quiet, c.quiet)
		}
		always := strings.Contains(out, "gcloud run services update tally-increment") && strings.Contains(out, "--no-cpu-throttling")
		if always != c.always {
			t.Errorf("%v: Increment billed by instance: %v, want %v", c.args, always, c.always)
		}
		for _, line := range strings.Split(out, "\n") {
			if strings.Contains(line, "gcloud functions deploy tally-increment") && !strings.Contains(line, c.size) {
				t.Errorf("%v: Increment deployed with %s, want %s", c.args, line, c.size)
			}
		}
	}
}
