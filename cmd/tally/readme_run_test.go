package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/tallycounters/tally/internal/testkit/emulatortest"
)

// readmeRun says how the tests run one command the README shows: run runs
// it, or elsewhere says which test or step runs it, or why none can.
type readmeRun struct {
	run       func(t *testing.T, line string) // checks it in the quick tier
	live      func(t *testing.T, line string) // runs it on the emulator, gcloud or a bench: TestReadmeRunsLive
	elsewhere string
}

// nodeSource says why NodeSource's lines are not run.
const nodeSource = "NodeSource's repository cannot be reached from the test machines; " +
	"docs/prerequisites.md says how Node.js 20 was tried on a clean Debian 12, and " +
	"authemu TestLocateRefusesAnOldNode what tally says on Debian 12's own 18"

// readmeRuns covers every command of the README, keyed as the README
// writes it (a command continued over lines with \ is joined).
var readmeRuns = map[string]readmeRun{
	"apt-get install default-jre-headless google-cloud-cli-firestore-emulator google-cloud-cli-pubsub-emulator": {run: runInstallLine},
	"apt-get install chromium shellcheck":                                     {run: runInstallLine},
	"command -v npm || apt-get install nodejs npm":                            {run: runInstallLine},
	"curl -fsSL https://deb.nodesource.com/setup_22.x | bash -":               {elsewhere: nodeSource},
	"apt-get install -y nodejs":                                               {elsewhere: nodeSource},
	"go run ./cmd/tally serve":                                                {elsewhere: "TestReadmeServeAndSessions runs serve, on a free port, and the README's sessions against it"},
	"go run ./cmd/tally serve --extension-counters 'pages:likes,stats.views'": {elsewhere: "internal/tools/stack TestExtensionCountersOnTheStack and clients/web TestExtensionClients start the stack with these settings, the emulator's own delivery bringing the moves"},
	"go run ./cmd/tally rules --extension-counters 'pages:likes,stats.views' --merge firestore.rules > firestore.merged.rules":                {elsewhere: "deploy TestExtensionRules merges tally's rules with the extension's clients' into an app's, as this command does, loads them into the emulator and writes as a client and the app would"},
	"deploy/deploy.sh --project PROJECT --region us-central1 --database-location nam5 --extension-counters 'pages:likes,stats.views'":         {elsewhere: "deploy TestDeployExtensionCounters dry-runs it, and TestDryRunParsesWithGcloud parses each of its commands with gcloud"},
	"go run ./cmd/tally extension takeover --project PROJECT --extension-counters 'pages:likes,stats.views' --dry-run":                        {elsewhere: "cmd/tally TestExtensionTakeoverCommand runs it on the emulator"},
	"go run ./cmd/tally extension takeover --project PROJECT --extension-counters 'pages:likes,stats.views'":                                  {elsewhere: "cmd/tally TestExtensionTakeoverCommand runs it on the emulator, twice"},
	"TALLY_AUTH=firebase TALLY_CORS_ORIGINS=http://localhost:5173 go run ./cmd/tally serve --port 8180 --emulator-port 8080 --auth-port 9099": {elsewhere: "cmd/tally TestServeOnGivenPorts runs serve on given ports, the Auth emulator's too, and internal/tools/stack TestOriginsHaveTheirLoopbackTwins allows a localhost origin as 127.0.0.1"},
	"firebase emulators:start --only auth,hosting": {elsewhere: "internal/tools/authemu starts the Firebase CLI's Auth emulator as this does, for cmd/tally TestBesideTheAppsFirebaseEmulators"},
	"FIREBASE_AUTH_EMULATOR_HOST=127.0.0.1:9099 TALLY_AUTH=firebase TALLY_CORS_ORIGINS=http://localhost:5000 go run ./cmd/tally serve --rules firestore.rules --port 8180 --emulator-port 8080": {elsewhere: "cmd/tally TestBesideTheAppsFirebaseEmulators runs it beside the Firebase CLI's Auth emulator, its ports free ones"},
	"go run ./cmd/tally doctor --project PROJECT --region us-central1": {elsewhere: "internal/tools/doctor TestDoctorOnTheLocalStack runs its checks on the stack and TestDoctorSaysWhatFails breaks each; no test reaches a Google Cloud project"},
	"go test -short ./...":                                       {elsewhere: ".ci/run runs it, with no Java, browser, Node.js, npm or gcloud to call"},
	"go test -race -timeout 30m ./...":                           {elsewhere: "the test command itself: .ci/run runs it"},
	"go test -race -count=20 ./internal/tools/syncwatch":         {elsewhere: "the suite runs this package's test, and .ci/flakes runs it five times over when a change touches it"},
	"go test -race -count=5 -run TestBannerCommands ./cmd/tally": {elsewhere: "the suite runs it, and .ci/flakes runs it so when a change touches it"},
	"TALLY_AUTH=firebase TALLY_COUNTS='posts:likes,views,comments=count(comments),likes_today=likes per day,hot=trend(likes + views/10, 6h)' go run ./cmd/tally serve": {elsewhere: "TestDemoFeed runs it, on a free port, and drives its /demo"},
	"npm pack ../tally/clients/web":                                                                                                  {elsewhere: "clients/web TestPackedInstall packs the client and installs it in an app, as the README says, and builds the README's example against it"},
	"npm install firebase@12 ./tallycounters-web-0.1.0.tgz":                                                                          {elsewhere: "clients/web TestPackedInstall"},
	"TALLY_COUNTS='posts:likes,views;users/*/posts:likes' go run ./cmd/tally serve":                                                  {elsewhere: "TestReadmeCounts runs it, on a free port, and the README's session against it"},
	"TALLY_COUNTS='posts:likes,views,comments=count(comments),shown=count(comments where hidden == false)' go run ./cmd/tally serve": {live: runAggregatesServe},
	"TALLY_COUNTS='posts:likes,views,comments=count(comments),shown=count(comments where hidden == false),score=sum(comments.score);products:reviews=count(reviews),stars=avg(reviews.stars);stats/site:users=count(/users)' go run ./cmd/tally config --triggers": {run: runConfigTriggers},
	`TALLY_COUNTS='posts:likes,comments=count(comments),shown=count(comments where hidden == false and lang == "en"),score=sum(comments.score)' go run ./cmd/tally indexes`:                                                                                        {run: runIndexes},
	"TALLY_BENCH_CHILDREN=1001,10000,100000 go test -run '^$' -bench BenchmarkAggregateChange -benchtime 1x -timeout 90m ./rollup":                                                                                                                                 {elsewhere: "rollup TestAggregatePartsBoundTheCost and TestEveryFormBoundsTheCost measure the same on 3,000 and 1,500 comments, and .ci/run runs each benchmark once"},
	"TALLY_COUNTS='posts:likes,views,views_today=views per day,views_7d=views over 7 days,hot=trend(likes + views/10, 6h)' TALLY_TIME_ZONE=Europe/Paris go run ./cmd/tally serve":                                                                                  {live: runWindowsServe},
	"go install ./cmd/tally": {live: runInstall}, // it builds the command: not the quick tier's
	"tally -h":               {run: runTally},
	"go test -run '^$' -fuzz '^FuzzParseRequest$' -fuzztime 5m ./increment":                                                                                        {elsewhere: ".ci/run runs it for 20 s"},
	"go test -run '^$' -fuzz '^FuzzDecode$' -fuzztime 5m ./rollup":                                                                                                 {elsewhere: ".ci/run runs it for 20 s"},
	"go test -run '^$' -bench . ./rollup ./increment":                                                                                                              {elsewhere: ".ci/run runs each benchmark once"},
	"go run ./cmd/tally bench --shards 10 --json bench.json --chart bench.png":                                                                                     {live: runBench},
	"go run ./cmd/tally bench --modes raw,tally --rate 0 --shards 1000 --duration 20s --delivery direct --instances N":                                             {live: runBench},
	"go run ./cmd/tally bench --counters 10000 --shards 10 --popularity zipf --listeners --rate 300 --duration 30s --instances N":                                  {live: runBench},
	"go run ./cmd/tally bench --counters 10000 --shards 10 --popularity zipf --listeners --rate 0 --duration 30s --instances N --delivery direct":                  {live: runBench},
	"go run ./cmd/tally bench --counters 400 --shards 4 --concurrency 400 --popularity client --rest 1s --rate 60 --listeners --duration 30s --instances N":        {live: runBench},
	"go run ./cmd/tally bench --modes tally --fields F --counters 100 --shards 10 --popularity zipf --listeners --rate 300 --duration 20s --instances N":           {elsewhere: "internal/tools/bench TestBenchFields runs the bench with --fields 3 over 2 documents and 2 instances; here, beside the other benches, it would slow them past their bound"},
	"go run ./cmd/tally bench --modes tally --counters 1 --shards 10 --fields 3 --rate 300 --duration 20s --instances N":                                           {elsewhere: "internal/tools/bench TestBenchFields runs the bench with --fields 3 over 2 documents and 2 instances"},
	"go run ./cmd/tally bench --modes tally,naive --counters 10000 --popularity uniform --rate 50 --duration 30s --delay 0 --duplicate 0 --instances N":            {elsewhere: "internal/tools/bench TestQuietCost runs tally and naive side by side over 400 counters on one shard, and checks what an increment costs"},
	"go run ./cmd/tally bench --modes tally,naive --counters 10000 --popularity uniform --rate 50 --duration 30s --delay 0 --duplicate 0 --fields F --instances N": {elsewhere: "internal/tools/bench TestQuietCost runs it with --fields 3 over 400 documents"},
	"go run ./cmd/tally bench --modes tally,naive --shards 10 --rate 300 --duration 30s --delay 0 --duplicate 0 --instances N":                                     {elsewhere: "the bench's default run, here with --shards 10, is of the same shape"},
	"go run ./cmd/tally bench --shards 10": {elsewhere: "the bench's default run (above, with --json and --chart) is this one"},
	"go run ./cmd/tally bench --shards 10 --modes tally,naive,plain [--increment-instances N] [--rate 50]":                                                                                                   {elsewhere: "internal/tools/bench TestQuietCost checks the bill's requests and time against what the stack served, for tally and naive, and plain's"},
	"go run ./cmd/tally bench --modes tally,plain --counters 5000 --fields 2 --rate 50 --duration 20s [--in-document [--increment-billing instance]]":                                                        {elsewhere: "internal/tools/bench TestQuietCostInDocument runs tally with --in-document beside plain over 100 documents with 2 counts, and checks that it is exact and a window apart, and its bill with Increment billed by instance"},
	"go run ./cmd/tally bench --modes tally,plain --counters 100 --fields 2 --rate 2 --duration 30s [--in-document [--increment-billing instance]]":                                                          {elsewhere: "internal/tools/bench TestQuietCostInDocument"},
	"go run ./cmd/tally bench --modes tally,plain --counters 5000 --fields 2 --rate 50 --duration 20s --in-document --increment-cpu 0.083 --increment-instances 4":                                           {elsewhere: "internal/tools/bench TestQuietCostOnSmallInstances runs tally with --in-document and --increment-cpu 0.167 on 2 instances, and checks that it is exact and a window apart, each request billed by its instance at that size, with the CPU used and the time held back measured"},
	"go run ./cmd/tally bench --modes tally,plain --counters 100 --fields 2 --rate 2 --duration 30s --in-document --increment-cpu 0.083 --increment-instances 2":                                             {elsewhere: "internal/tools/bench TestQuietCostOnSmallInstances"},
	"go run ./cmd/tally bench --modes tally,plain --counters 5000 --fields 2 --rate 50 --duration 20s --keys [--in-document [--increment-billing instance | --increment-cpu 0.083 --increment-instances 4]]": {elsewhere: "internal/tools/bench TestKeyedQuietCost runs tally with --keys and --in-document, and checks that it is exact and a window apart, with most steps written into their documents"},
	"go run ./cmd/tally bench --modes tally,plain --counters 100 --fields 2 --rate 2 --duration 30s --keys [--in-document --increment-cpu 0.083 --increment-instances 2]":                                    {elsewhere: "internal/tools/bench TestKeyedQuietCost"},
	"go run ./cmd/tally bench --modes tally,plain --counters 100 --fields 2 --rate 2 --duration 30s --timed --increment-cpu 0.083 --increment-instances 2 [--in-document]":                                   {elsewhere: "internal/tools/bench TestTimedQuietCost runs tally with --timed and --in-document, and checks that it is exact and a window apart, with most increments written into their posts"},
	"go run ./cmd/tally bench --modes tally,plain --counters 2000 --fields 2 --rate 2 --duration 60s --timed --increment-cpu 0.083 --increment-instances 2 [--in-document]":                                  {elsewhere: "internal/tools/bench TestTimedQuietCost runs tally with --timed and --in-document, and checks that it is exact and a window apart, with most increments written into their posts"},
	"go run ./cmd/tally bench --modes tally,plain --counters 5000 --fields 2 --rate 50 --duration 20s --timed --increment-billing instance [--in-document]":                                                  {elsewhere: "internal/tools/bench TestTimedQuietCost"},
	"go run ./cmd/tally bench --modes tally,naive,plain --counters 5000 --fields 2 --rate 50 --duration 20s":                                                                                                 {elsewhere: "internal/tools/bench TestQuietCost runs tally, naive and plain with --fields 3 and checks the bill"},
	"go run ./cmd/tally bench --modes tally,naive --counters 10000 --rate 50 --duration 20s [--client-writes]":                                                                                               {elsewhere: "internal/tools/bench TestClientWrites runs tally with the shards written by the client"},
	"go run ./cmd/tally bench --modes tally,plain --counters 100 --fields 2 --rate 2 --duration 30s":                                                                                                         {elsewhere: "internal/tools/bench TestQuietCost checks the bill of quiet documents, tally's and plain's, with --fields 3"},
	"go run ./cmd/tally bench --soak 60s": {live: runBench},
	"go run ./cmd/tally bench --windows":  {elsewhere: "internal/tools/bench TestBenchWindows runs --windows over 30 quiet posts and 2 instances, across a boundary; the whole run waits for 3 minute boundaries"},
	"go run ./cmd/tally bench --aggregate --modes tally,trigger --counters 10001 --popularity hot --rate 333 --existing 2 --duration 10s --instances N":                                          {elsewhere: "internal/tools/bench TestBenchAggregate runs the three modes of --aggregate over 5 posts on 2 instances, with every event duplicated"},
	"go run ./cmd/tally bench --aggregate --counters 1 --existing E --rate 50 --duration 10s":                                                                                                    {elsewhere: "internal/tools/bench TestBenchAggregate runs --aggregate; rollup BenchmarkAggregateChange gives the cost per change at each size"},
	"go run ./cmd/tally bench --modes tally --burst --rate R --fields F --instances N --concurrency 64 --duplicate 0 --delay 0":                                                                  {elsewhere: "internal/tools/bench TestViralCounterUnderContention runs a burst on a new counter, and TestHotSpots checks its per-second figures"},
	"go run ./cmd/tally bench --modes tally --burst --rate R --fields F --contention 10 --concurrency 64 --duplicate 0 --delay 0":                                                                {elsewhere: "internal/tools/bench TestViralCounterUnderContention runs a burst through the contention stand-in"},
	"go run ./cmd/tally bench --modes tally --counters 400 --popularity client --concurrency 400 --rest 4s --rate 0 --instances 4 --listeners --duplicate 0 --delay 0 --duration 30s --warmup 0": {elsewhere: "internal/tools/bench TestBenchFeed runs tally over counters made by their first increment, with one listener on their collection, on 2 instances; TestBenchSmall with a listener on each counter"},
	"go run ./cmd/tally bench --modes tally --counters 100 --popularity client --concurrency 100 --rest 2s --rate 0 --instances N --listeners --duplicate 0 --delay 0 --duration 30s --warmup 0": {elsewhere: "internal/tools/bench TestBenchSmall runs tally with a listener on each counter over 2 instances"},
	"deploy/deploy.sh --project PROJECT --region us-central1 --database-location nam5":                                                                                                           {run: runDeployDryRun},
	"URL=https://us-central1-PROJECT.cloudfunctions.net/tally-increment":                                                                                                                         {elsewhere: "needs a deployed function"},
	`curl -s -X POST "$URL" -H "Authorization: Bearer $(gcloud auth print-identity-token)" -H 'Content-Type: application/json' -d '{"counter":"likes"}'`:                                         {elsewhere: "needs a deployed function"},
	"go run ./cmd/tally get likes --project PROJECT": {elsewhere: "needs a Google Cloud project; the CLI session runs tally get on the emulator"},
	"deploy/deploy.sh --project PROJECT --region us-central1 --database-location nam5 --public --auth firebase --cors-origins https://app.example --time-zone Europe/Paris --counts 'posts:views,likes=count(likes),comments=count(comments),views_today=views per day,hot=trend(likes + views/10, 6h)'": {run: runDeployDryRun},
	"deploy/deploy.sh --project PROJECT --region us-central1 --database-location nam5 --counts 'posts:likes=count(likes)' --rules firestore.rules":                                                                                                                                                       {run: runDeployDryRun},
	"deploy/deploy.sh --project PROJECT --region us-central1 --database-location nam5 --public --auth firebase --votes-only --app-check --counts 'posts:likes' --cors-origins https://app.example":                                                                                                       {run: runDeployDryRun},
	"TALLY_COUNTS='posts:views,likes=count(likes),comments=count(comments),views_today=views per day,hot=trend(likes + views/10, 6h)' go run ./cmd/tally rules --merge firestore.rules > firestore.merged.rules":                                                                                         {elsewhere: "deploy TestMergeRules merges tally's rules for these counts into an app's, checks the note on its own match of posts, and loads the result, with the note's conditions added, into the emulator"},
	"deploy/deploy.sh --project PROJECT --region us-central1 --database-location nam5 --delete":                                                                                                                                                                                                          {run: runDeployDryRun},
	"cd examples/like-button && npm ci && npm start":                                                                               {elsewhere: "TestStarterApp runs npm ci, then what npm start runs: npm run build, then serve --app public with TALLY_AUTH=firebase, and drives the app"},
	"firebase projects:addfirebase PROJECT":                                                                                        {elsewhere: "needs a Google Cloud project"},
	"firebase apps:create web tally-web --project PROJECT":                                                                         {elsewhere: "needs a Google Cloud project"},
	"firebase apps:sdkconfig web APP_ID --project PROJECT":                                                                         {elsewhere: "needs a Google Cloud project"},
	"gcloud services enable identitytoolkit.googleapis.com --project PROJECT":                                                      {live: runGcloudParse},
	"gcloud services enable recaptchaenterprise.googleapis.com firebaseappcheck.googleapis.com --project PROJECT":                  {live: runGcloudParse},
	"gcloud recaptcha keys create --display-name=tally-web --web --domains=app.example --integration-type=score --project PROJECT": {live: runGcloudParse},
	`curl -s -X PATCH -H "Authorization: Bearer $(gcloud auth print-access-token)" -H "X-Goog-User-Project: PROJECT" -H 'Content-Type: application/json' 'https://identitytoolkit.googleapis.com/admin/v2/projects/PROJECT/config?updateMask=signIn.email.enabled' -d '{"signIn":{"email":{"enabled":true}}}'`: {elsewhere: "needs a Google Cloud project"},
	"TALLY_AUTH=firebase TALLY_COUNTS='posts:views,likes=count(likes),comments=count(comments),views_today=views per day,hot=trend(likes + views/10, 6h)' go run ./cmd/tally serve --rules app.rules --port 8080 --emulator-port 8081 --auth-port 9099":                                                        {elsewhere: "cmd/tally TestMobileRecipeOnServe runs serve with this line, its ports free ones, and docs/mobile.md's app against it with the JS SDK; TestServeOnGivenPorts checks the ports"},
	"TALLY_COUNTS='posts:views,likes=count(likes)'":                                                                            {elsewhere: "clients/web TestLikeDocumentsFromTwoDevices serves these counts, under docs/mobile.md's rules, with the JS SDK on two devices"},
	"apt-get install -y apt-transport-https ca-certificates gnupg curl":                                                        {elsewhere: "docs/prerequisites.md: Google's apt repository cannot be reached from the test machines; the page says so"},
	"curl -fsSL https://packages.cloud.google.com/apt/doc/apt-key.gpg | gpg --dearmor -o /usr/share/keyrings/cloud.google.gpg": {elsewhere: "docs/prerequisites.md: needs Google's apt repository"},
	"apt-get update": {elsewhere: "docs/prerequisites.md: needs Google's apt repository"},
	"apt-get install -y google-cloud-cli google-cloud-cli-firestore-emulator google-cloud-cli-pubsub-emulator default-jre-headless chromium shellcheck": {elsewhere: "docs/prerequisites.md: needs Google's apt repository; the test machines have these packages"},
	"command -v npm || apt-get install -y nodejs npm":                    {run: runInstallLine},
	"gcloud components install cloud-firestore-emulator pubsub-emulator": {elsewhere: "docs/prerequisites.md: for a gcloud installed from Google's archive (macOS, Windows), not tried"},
	"npm install -g firebase-tools@15":                                   {elsewhere: "docs/web.md: installs the Firebase CLI for a deploy; the tests install the same version, pinned, in the machine's cache"},
	"firebase login":                                                     {elsewhere: "needs a Google account"},
	"cd examples/like-button":                                            {elsewhere: "TestStarterApp builds and serves the example from there"},
	"npm run build":                                                      {elsewhere: "TestStarterApp runs it in examples/like-button"},
	"firebase deploy --only hosting --project PROJECT":                   {elsewhere: "needs a Google Cloud project"},
	`curl -s -X PATCH -H "Authorization: Bearer $(gcloud auth print-access-token)" -H "X-Goog-User-Project: PROJECT" -H 'Content-Type: application/json' 'https://firebaseappcheck.googleapis.com/v1/projects/PROJECT/apps/APP_ID/recaptchaEnterpriseConfig?updateMask=siteKey' -d '{"siteKey":"SITE_KEY"}'`: {elsewhere: "needs a Google Cloud project"},
}

// commandPrefixes start the README's command lines; other lines of its
// code blocks are output, code or queries.
var commandPrefixes = []string{"go ", "tally ", "apt-get ", "command ", "deploy/", "curl ", "URL=", "TALLY_", "npm ", "gcloud ", "firebase ", "cd ", "FIREBASE_"}

// outputMarkers precede the README's blocks of output, and of sessions
// that other tests run line by line.
var outputMarkers = []string{"web client", "serve banner", "auth banner", "quickstart", "cli session", "counts session", "rank session", "windows session", "deploy", "bench table", "soak table", "go example"}

// readmeCommands lists the commands in the fenced blocks of the README
// and of docs/.
func readmeCommands(t *testing.T) []string {
	t.Helper()
	b := []byte(readmeText(t))
	var out []string
	lines := strings.Split(string(b), "\n")
	for i := 0; i < len(lines); i++ {
		fence, ok := strings.CutPrefix(strings.TrimSpace(lines[i]), "```") // a block in a list is indented
		if !ok {
			continue
		}
		skip := fence != "" // js, go: code
		for _, m := range outputMarkers {
			if i > 0 && lines[i-1] == "<!-- README test: "+m+" -->" {
				skip = true
			}
		}
		for i++; i < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[i]), "```"); i++ {
			line := lines[i]
			for strings.HasSuffix(line, `\`) && i+1 < len(lines) {
				i++
				line = strings.TrimSuffix(line, `\`) + strings.TrimSpace(lines[i])
			}
			if c, _, found := strings.Cut(line, "  #"); found {
				line = c
			}
			line = strings.TrimSpace(line)
			if skip || line == "" || !hasAnyPrefix(line, commandPrefixes) {
				continue
			}
			out = append(out, line)
		}
	}
	return out
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// TestReadmeRuns holds readmeRuns to the commands the README and the docs
// show, both ways: a command that no test runs, and no line here
// explains, fails it. It checks those it can in the quick tier (run);
// TestReadmeRunsLive runs the rest, as written, with only their durations
// shortened: each must end, and succeed.
func TestReadmeRuns(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, line := range readmeCommands(t) {
		seen[line] = true
		r, ok := readmeRuns[line]
		switch {
		case !ok || r.run == nil && r.live == nil && r.elsewhere == "":
			t.Errorf("the README shows a command no test runs:\n%s", line)
		case r.run != nil:
			t.Run(line, func(t *testing.T) {
				t.Parallel()
				r.run(t, line)
			})
		}
	}
	for line := range readmeRuns {
		if !seen[line] {
			t.Errorf("a command the tests run is not in the README:\n%s", line)
		}
	}
	ci, err := os.ReadFile("../../.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range []string{"default-jre-headless", "chromium", "shellcheck", "command -v npm >/dev/null 2>&1 || missing+=(nodejs npm)"} {
		if !strings.Contains(string(ci), pkg) {
			t.Errorf(".ci/run does not install %s, which the Quickstart lists", pkg)
		}
	}
}

// tallyArgs turns a README command of the tally program into its
// arguments, with durations shortened (a bench that gives none runs for
// its default, which is shortened too: the load, and the unmeasured load
// before it), N instances made 2, and 10,000 counters made 500 (making and
// listening to 10,000 took a minute and a half of a 1 s run).
func tallyArgs(line string) []string {
	line = strings.TrimPrefix(strings.TrimPrefix(line, "go run ./cmd/tally "), "tally ")
	if strings.HasPrefix(line, "bench ") && !strings.Contains(line, "--soak") {
		if !strings.Contains(line, "--duration") {
			line += " --duration 0.5s"
		}
		if !strings.Contains(line, "--warmup") {
			line += " --warmup 0.5s"
		}
	}
	for _, r := range []struct{ re, to string }{
		{`--duration \S+`, "--duration 0.5s"},
		{`--soak \S+`, "--soak 10s"},
		{`--instances N`, "--instances 2"},
		{`--counters 10000`, "--counters 500"},
	} {
		line = regexp.MustCompile(r.re).ReplaceAllString(line, r.to)
	}
	return strings.Fields(line)
}

// runTally runs a tally command to its end: it must exit 0.
func runTally(t *testing.T, line string) {
	stdout, stderr, code := tallyOut(t, nil, tallyArgs(line)...)
	if code != 0 || stdout == "" {
		t.Errorf("%s: exit %d\n%s%s", line, code, stdout, stderr)
	}
}

// runInstall installs the command from this clone, as the README says,
// into a directory of its own, and runs it.
func runInstall(t *testing.T, line string) {
	bin := t.TempDir()
	cmd := exec.Command("bash", "-c", line)
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), "GOBIN="+bin)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", line, err, out)
	}
	out, err := exec.Command(filepath.Join(bin, "tally"), "--version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "tally ") {
		t.Errorf("the installed tally --version: %q, %v", out, err)
	}
}

// runDeployDryRun runs a deploy command of the README as a dry run: what
// it would do is checked, each gcloud command against gcloud's own parser,
// by the deploy tests. Its tally command is this test binary under the
// name tally (deploy.sh runs its command without TALLY_* variables, so
// the name is what says to be tally): no build of tally here.
func runDeployDryRun(t *testing.T, line string) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "tally")
	if err := os.Symlink(self, bin); err != nil {
		t.Fatal(err)
	}
	// A deploy that merges into the app's rules file merges into the
	// starter app's, which the docs name as one.
	cmd := exec.Command("bash", "-c", strings.Replace(line, "--rules firestore.rules", "--rules examples/like-button/firestore.rules", 1)+" --dry-run")
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), "TALLY_BIN="+bin)
	want := "gcloud functions deploy tally-increment"
	if strings.HasSuffix(line, " --delete") {
		want = "gcloud functions delete tally-increment"
	}
	// With --rules FILE the merge is made here, and must be.
	live := !strings.Contains(line, "--rules ") // the rules in force, which a dry run here cannot read
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), want) || !live && strings.Contains(string(out), "could not read the rules") {
		t.Errorf("%s --dry-run: %v\n%s", line, err, out)
	}
}

// runBench runs a bench command of the README, in a directory of its own,
// with its output to a pipe, or, for the default run, to a terminal: it
// must end, succeed and print its table, and the files it names must be
// there.
func runBench(t *testing.T, line string) {
	emulatortest.Require(t)
	args := tallyArgs(line)
	dir := t.TempDir()
	var out string
	if strings.Contains(line, "--json bench.json") {
		out = benchInTerminal(t, dir, args) // the others show it to a pipe
	} else {
		cmd := tallyCommand(dir, nil, args...)
		var b bytes.Buffer
		cmd.Stdout, cmd.Stderr = &b, &b
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if code := waitExit(t, cmd); code != 0 {
			t.Fatalf("%s: exit %d\n%s", strings.Join(args, " "), code, b.String())
		}
		out = b.String()
	}
	if !strings.Contains(out, "increments/s") {
		t.Fatalf("%s printed no table:\n%s", strings.Join(args, " "), out)
	}
	for _, a := range args {
		if strings.HasSuffix(a, ".json") || strings.HasSuffix(a, ".png") {
			if st, err := os.Stat(filepath.Join(dir, a)); err != nil || st.Size() == 0 {
				t.Errorf("%s wrote no %s: %v", line, a, err)
			}
		}
	}
}

// benchInTerminal runs the bench in dir with a pseudo-terminal for its
// output, as a user at a terminal sees it: it must draw its progress bars,
// print its table, and end. It returns what it printed.
func benchInTerminal(t *testing.T, dir string, args []string) string {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Dir, cmd.Env = dir, childEnv(nil)
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 50, Cols: 160})
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	var out bytes.Buffer
	read := make(chan struct{})
	go func() { io.Copy(&out, bufio.NewReader(tty)); close(read) }()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute) // a liveness bound
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("in a terminal: %v", err)
		}
	case <-ctx.Done():
		cmd.Process.Kill()
		<-done
		t.Fatal("in a terminal, the bench did not end")
	}
	tty.Close()
	<-read
	text := out.String()
	if !strings.Contains(text, "tally settle") || !strings.Contains(text, "[====") || !strings.Contains(text, "increments/s") {
		t.Errorf("in a terminal it printed no bars, or no table:\n%s", text)
	}
	return text
}

// runInstallLine runs a Quickstart install line with bash, as root would,
// but with an apt-get that only says what it was asked for: on a machine
// with npm (NodeSource's Node.js brings its own) and on one without, it
// must ask for npm only where there is none, as Debian's npm conflicts
// with NodeSource's nodejs.
func runInstallLine(t *testing.T, line string) {
	for _, hasNPM := range []bool{true, false} {
		bin := t.TempDir()
		stub := func(name, script string) {
			if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"+script), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		stub("apt-get", `echo "apt-get $*" >>"`+filepath.Join(bin, "asked")+`"`+"\n")
		if hasNPM {
			stub("npm", "exit 0\n")
		}
		bash, err := exec.LookPath("bash")
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bash, "-c", line)
		cmd.Env = append(os.Environ(), "PATH="+bin) // nothing else: no npm unless stubbed
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", line, err, out)
		}
		asked, _ := os.ReadFile(filepath.Join(bin, "asked"))
		wantsNPM := strings.Contains(string(asked), " npm")
		switch {
		case strings.HasPrefix(line, "apt-get") && (wantsNPM || strings.Contains(string(asked), "nodejs")):
			t.Errorf("%q asks for Node.js or npm, which conflict with NodeSource's: %s", line, asked)
		case strings.HasPrefix(line, "command") && wantsNPM == hasNPM:
			t.Errorf("with npm installed: %v, %q asked apt-get for %q", hasNPM, line, asked)
		}
	}
}

// runGcloudParse gives a gcloud command of the docs to the installed
// gcloud, with no account and offline: it must take the arguments, and
// stop only for want of an account.
func runGcloudParse(t *testing.T, line string) {
	emulatortest.Without(t, "gcloud")
	if _, err := exec.LookPath("gcloud"); err != nil {
		t.Fatal("gcloud is not installed: install the Google Cloud CLI (Debian package google-cloud-cli)")
	}
	cmd := exec.Command("bash", "-c", strings.ReplaceAll(line, "PROJECT", "demo-proj")) // a valid project id
	cmd.Env = append(os.Environ(), "CLOUDSDK_CONFIG="+t.TempDir(), "CLOUDSDK_CORE_DISABLE_PROMPTS=1",
		"CLOUDSDK_COMPONENT_MANAGER_DISABLE_UPDATE_CHECK=1", "CLOUDSDK_CORE_ACCOUNT=")
	out, _ := cmd.CombinedOutput()
	if !strings.Contains(string(out), "You do not currently have an active account selected") {
		t.Errorf("gcloud does not take %s:\n%s", line, out)
	}
}
