package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/tallycounters/tally/internal/cloudlog"
	"github.com/tallycounters/tally/internal/extension"
	"github.com/tallycounters/tally/internal/tools/authemu"
	"github.com/tallycounters/tally/internal/tools/emulator"
	"github.com/tallycounters/tally/internal/tools/pubsubemu"
	"github.com/tallycounters/tally/internal/tools/stack"
	"github.com/tallycounters/tally/setup"
)

// stopTimeout bounds serve's draining: events in flight, then the last
// folds. The save that follows has a bound of its own (--save-timeout,
// stack.ExportTimeout), so that the data is saved whatever the draining
// left undone.
const stopTimeout = time.Minute

// serveCommand is tally serve: the local stack, until Ctrl-C.
func serveCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the Firestore emulator, the functions and the event bridge locally",
		Long: "serve starts the Firestore emulator (with tally's security rules), serves Increment,\n" +
			"Rollup and Reconcile, and carries the emulator's trigger events to Rollup as Eventarc\n" +
			"does. On start it brings every total up to date. On Ctrl-C or SIGTERM it refuses new\n" +
			"increments, answers every event in flight, folds every counter, saves the data\n" +
			"(--data) and stops everything it started.\n\n" +
			"With FIRESTORE_EMULATOR_HOST set it uses that emulator instead, which must post its\n" +
			"events to the bridge (--functions_emulator 127.0.0.1:<--bridge-port>).",
		Args: exactArgs(0, "no arguments"),
	}
	s := configFlags(cmd)
	f := cmd.Flags()
	port := f.Int("port", envInt("PORT", 8080), "port of the functions (/Increment, /Rollup, /Reconcile); env PORT")
	host := f.String("host", "127.0.0.1", "address to serve on")
	emuPort := f.Int("emulator-port", 0, "port of the Firestore emulator (default: a free one)")
	authPort := f.Int("auth-port", 0, "with TALLY_AUTH=firebase, port of the Auth emulator serve starts (default: a free one)")
	bridgePort := f.Int("bridge-port", 0, "port of the event bridge the emulator posts to (default: a free one)")
	data := f.String("data", "", "keep the emulator's data in `DIR` across runs")
	saveTimeout := f.Duration("save-timeout", stack.ExportTimeout, "with --data, how long serve waits, as it stops, for the emulator to answer and to save the data; past it, it says the data was not saved and exits 1, leaving DIR as it was")
	verbose := f.BoolP("verbose", "v", false, "show the emulator's own output")
	app := f.String("app", "", "serve the web app in `DIR` at / beside the functions (it reads "+stack.LocalConfigPath+" to find the emulators)")
	fan := f.String("fanout", "", "how the boundary job and Reconcile run their parts: pubsub (through the Pub/Sub emulator, as deployed) or in-process (default: pubsub when windows are declared, in-process when not)")
	rules := f.String("rules", "", "the app's own rules `FILE` (its firestore.rules), which the emulator enforces with tally's merged in as 'tally rules --merge' prints them, reloaded when the file changes")
	hot := f.Float64("contention", 0, "put a stand-in for Firestore's contention between the functions and the emulator: past this many writes a second to one document, their writes wait, then fail ABORTED (0: off)")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		cfg, err := s.config()
		if err != nil {
			return err
		}
		stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
		o := stack.Options{
			Config: cfg, Host: *host, Port: *port, EmulatorPort: *emuPort, BridgePort: *bridgePort,
			DataDir: *data, SaveTimeout: *saveTimeout, ExternalHost: os.Getenv(EnvEmulator), Logs: stdout, Logger: cloudlog.New(stdout, slog.LevelInfo),
			AuthHost: os.Getenv(authemu.EnvHost), AuthPort: *authPort, Contention: *hot, AppDir: *app,
			Fanout: *fan, PubSubHost: os.Getenv(pubsubemu.EnvHost), AppRules: *rules,
		}
		if *rules != "" && o.ExternalHost != "" {
			return usagef("--rules loads rules into the emulator serve starts; unset %s", EnvEmulator)
		}
		if *fan != "" && *fan != setup.FanoutPubSub && *fan != setup.FanoutInProcess {
			return usagef("--fanout %s: want %s or %s", *fan, setup.FanoutPubSub, setup.FanoutInProcess)
		}
		if *authPort != 0 && cfg.Auth != setup.AuthFirebase {
			return usagef("--auth-port %d: serve starts the Auth emulator only with %s=%s", *authPort, setup.EnvAuth, setup.AuthFirebase)
		}
		if *app != "" {
			if st, err := os.Stat(filepath.Join(*app, "index.html")); err != nil || st.IsDir() {
				return usagef("--app %s: no index.html there; give the directory of the app's built files", *app)
			}
		}
		if *verbose {
			o.EmulatorOutput = stderr
		}
		if o.ExternalHost == "" {
			if o.Emulator, err = emulator.LocateEnv(os.Getenv); err != nil {
				return err
			}
		} else if err := checkExternal(o.ExternalHost, *data); err != nil {
			return err
		}
		return serve(stdout, stderr, o)
	}
	return cmd
}

// serve runs the stack of o until Ctrl-C, SIGTERM or SIGHUP, or until its
// emulator exits, then stops it: the events in flight answered, every
// counter folded, the data saved.
func serve(stdout, stderr io.Writer, o stack.Options) error {
	stopWithParent()
	// A log line that cannot be written (its pipe's reader gone, as when
	// Ctrl-C stops both serve and the tee it writes to) is lost, and serve
	// goes on to stop as asked: SIGPIPE would kill it before it saves. The
	// terminal closing (SIGHUP) stops it as Ctrl-C does.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	st, err := stack.Start(ctx, o)
	if err != nil {
		return err
	}
	printReady(ctx, stdout, st, o)
	var failed error
	select {
	case <-ctx.Done():
		saving := ""
		if o.DataDir != "" {
			saving = fmt.Sprintf(", then saving the data in %s (within %s, however long the emulator takes to answer)", o.DataDir, o.SaveTimeout)
		}
		fmt.Fprintf(stderr, "tally serve: stopping: answering the events in flight and folding every counter%s\n", saving)
	case <-st.Done():
		failed = fmt.Errorf("the Firestore emulator exited unexpectedly: %v", st.Emulator.Err())
	}
	sctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
	defer cancel()
	if err := st.Stop(sctx); err != nil && failed == nil && !errors.Is(err, context.Canceled) {
		failed = err
	}
	if st.Unanswered > 0 {
		fmt.Fprintf(stderr, "tally serve: %d event(s) were left unanswered; every counter was folded after them, so the totals hold their writes\n", st.Unanswered)
	}
	if st.Saved {
		fmt.Fprintf(stderr, "tally serve: the data is saved in %s\n", o.DataDir)
	}
	if st.Emulator != nil && st.Emulator.Killed() {
		fmt.Fprintf(stderr, "tally serve: the Firestore emulator (pid %d) had not exited %v after it was asked to, and was killed\n", st.Emulator.PID(), emulator.StopGrace)
	}
	if failed == nil {
		fmt.Fprintln(stderr, "tally serve: stopped")
	}
	return failed
}

// checkExternal checks the emulator FIRESTORE_EMULATOR_HOST names before
// serve uses it: one left set by a serve that has stopped answers nothing.
// --data saves the data of an emulator serve starts, so it is refused with
// one serve did not start.
func checkExternal(host, data string) error {
	if data != "" {
		return usagef("--data keeps the data of the emulator serve starts, but %s=%s names one it did not start, "+
			"whose data it cannot save: unset %s to have serve start its own, or leave out --data", EnvEmulator, host, EnvEmulator)
	}
	if err := emulator.Check(host); err != nil {
		return fmt.Errorf("%s=%s, but %v; a serve that has stopped may have left it set. "+
			"To go on, unset it ('unset %s'), and serve starts an emulator of its own; or start an emulator at %s, "+
			"with --functions_emulator 127.0.0.1:PORT, and give serve --bridge-port PORT", EnvEmulator, host, err, EnvEmulator, host)
	}
	return nil
}

func printReady(ctx context.Context, w io.Writer, s *stack.Stack, o stack.Options) {
	if s.Emulator != nil {
		rules := "deploy/firestore.rules"
		switch {
		case o.AppRules != "":
			rules = fmt.Sprintf("your %s with tally's merged in ('tally rules --merge %s' prints them), again whenever the file changes", o.AppRules, o.AppRules)
		case layoutOf(s.Config()).OnDocs():
			rules = "deploy/counts.rules with example rules for the counted collections ('tally rules' prints them)"
		}
		if ext := o.Config.ExtensionCounters; !ext.None() {
			rules += ", and the extension's clients' of " + ext.String()
		}
		fmt.Fprintf(w, "tally: Firestore emulator (pid %d) at %s, delivering events to %s, enforcing %s\n",
			s.Emulator.PID(), s.EmulatorHost, s.BridgeAddr, rules)
	} else {
		fmt.Fprintf(w, "tally: using the emulator at %s (%s). Rollup runs only if that emulator was started with "+
			"--functions_emulator %s; its security rules are its own\n", s.EmulatorHost, EnvEmulator, s.BridgeAddr)
	}
	if o.DataDir != "" {
		fmt.Fprintf(w, "tally: data kept in %s\n", o.DataDir)
	}
	if s.Contention != nil {
		fmt.Fprintf(w, "tally: the functions reach the emulator through a stand-in for Firestore's contention: "+
			"past %g writes a second to one document, writes wait, then fail ABORTED\n", o.Contention)
	}
	switch {
	case s.Auth != nil:
		fmt.Fprintf(w, "tally: Firebase Auth emulator at %s: Increment takes signed-in users only\n", s.AuthHost)
	case s.AuthHost != "":
		fmt.Fprintf(w, "tally: using the Firebase Auth emulator at %s (%s)\n", s.AuthHost, authemu.EnvHost)
	}
	switch {
	case s.PubSub != nil:
		fmt.Fprintf(w, "tally: Pub/Sub emulator (pid %d) at %s: the boundary job and Reconcile fan their parts out through %s to /Reconcile?part, as deployed\n",
			s.PubSub.PID(), s.PubSubHost, stack.PartsTopic)
	case s.Fanout == setup.FanoutPubSub:
		fmt.Fprintf(w, "tally: using the Pub/Sub emulator at %s (%s): the jobs' parts fan out through %s to /Reconcile?part\n",
			s.PubSubHost, pubsubemu.EnvHost, stack.PartsTopic)
	case o.Fanout != "" || layoutOf(s.Config()).SmallestUnit() != "":
		fmt.Fprintf(w, "tally: the boundary job and Reconcile run their parts in-process, one after another (--fanout pubsub runs them as deployed)\n")
	}
	if ext := s.Config().ExtensionCounters; !ext.None() {
		fmt.Fprintf(w, "tally: taking over the firestore-counter extension's counters %s: Rollup moves the shards its clients write "+
			"(D/%s/…, under those documents only) into their documents (docs/extension.md)\n", ext, extension.Collection)
	}
	// the demo's posts exist before any line a user (or a script) acts on
	if err := s.SeedDemo(ctx); err != nil {
		fmt.Fprintf(w, "tally: the demo's posts: %v\n", err)
	}
	fmt.Fprintf(w, "tally: %d counter(s) brought up to date\n", s.Settled)
	for _, u := range s.Unsettled {
		fmt.Fprintf(w, "tally: %s could not be folded, and is left as it is: %v\n", u.Counter, u.Err)
	}
	fmt.Fprintf(w, "tally: functions at %s/Increment, %s/Rollup and %s/Reconcile; Ctrl-C stops everything\n",
		s.FunctionsURL, s.FunctionsURL, s.FunctionsURL)
	if layoutOf(s.Config()).OnDocs() {
		fmt.Fprintf(w, "tally: a feed of posts to like and comment on at %s/demo\n", s.FunctionsURL)
	} else {
		fmt.Fprintf(w, "tally: a like button at %s/demo\n", s.FunctionsURL)
	}
	if o.AppDir != "" {
		fmt.Fprintf(w, "tally: your app, from %s, at %s/\n", o.AppDir, s.FunctionsURL)
	}
	if origins := s.Config().CORSOrigins; slices.Contains(origins, "*") {
		fmt.Fprintf(w, "tally: pages of any origin may call the functions (TALLY_CORS_ORIGINS=*)\n")
	} else {
		fmt.Fprintf(w, "tally: pages of %s may call the functions; any other page gets 403 (TALLY_CORS_ORIGINS allows more)\n", listed(origins))
	}
	fmt.Fprintf(w, "export %s=%s\n", EnvEmulator, s.EmulatorHost)
	printExample(ctx, w, s)
	if ext := extensionOf(s.Config()); len(ext) > 0 {
		printExtensionExample(w, s, ext[0])
	}
}

// printExtensionExample prints the write an app on the firestore-counter
// extension's clients makes, an increment of the first field c declares
// in its own shard of a document c holds (through the rules in force,
// signed in or not), and the read, a second later, of that document,
// which holds it once Rollup has moved the shard.
func printExtensionExample(w io.Writer, s *stack.Stack, counter extension.Counter) {
	c := s.Config()
	db := fmt.Sprintf("projects/%s/databases/%s", c.Project, c.Database)
	doc, field := exampleDocument(counter.Collection), counter.Fields[0]
	commit := fmt.Sprintf(`{"writes":[{"update":{"name":"%s/documents/%s/%s/try-it"},"updateMask":{},`+
		`"updateTransforms":[{"fieldPath":%q,"increment":{"integerValue":"1"}}]}]}`, db, doc, extension.Collection, field)
	fmt.Fprintf(w, "# try it as the extension's clients do: add 1 to %s in a shard of %s, then a second later read %s, where Rollup moved it\n", field, doc, doc)
	fmt.Fprintf(w, "curl -s -X POST 'http://%s/v1/%s/documents:commit' -H 'Content-Type: application/json' -d '%s'\n", s.EmulatorHost, db, commit)
	fmt.Fprintf(w, "sleep 1; curl -s -H 'Authorization: Bearer owner' 'http://%s/v1/%s/documents/%s?mask.fieldPaths=%s'\n", s.EmulatorHost, db, doc, field)
}

// printExample prints commands that increment a count and, a second
// later, read it back, as printed: with a token from 'tally token' where
// Increment takes signed-in users only, and on a document that exists
// (made first by the commands where there is none yet). Where the count
// has a window, it is the window's count, and they read the window with
// tally get and tally series too, each runnable as printed from a clean
// shell.
func printExample(ctx context.Context, w io.Writer, s *stack.Stack) {
	doc, field, exists, err := s.Example(ctx)
	if err != nil {
		fmt.Fprintf(w, "tally: no example to show: %v\n", err)
		return
	}
	c := s.Config()
	window, series := s.ExampleWindows(doc, field)
	docURL := fmt.Sprintf("http://%s/v1/projects/%s/databases/%s/documents/%s", s.EmulatorHost, c.Project, c.Database, doc)
	aggregate := layoutOf(c).OnDocs() && layoutOf(c).IsAggregate(doc, field)
	switch {
	case aggregate:
		fmt.Fprintf(w, "# try it: read %s of %s (it counts documents your app writes)\n", field, doc)
	case window != "":
		fmt.Fprintf(w, "# try it: add 1 to %s of %s, then a second later read it, %s, and the series of %s\n", field, doc, window, series)
	case layoutOf(c).OnDocs():
		fmt.Fprintf(w, "# try it: add 1 to %s of %s, then a second later read it\n", field, doc)
	default:
		fmt.Fprintf(w, "# try it: add 1 to the counter likes, then a second later read its total\n")
	}
	if !exists {
		fmt.Fprintf(w, "curl -s -o /dev/null -w '%%{http_code}\\n' -X PATCH -H 'Authorization: Bearer owner' '%s' -d '{\"fields\":{}}'   # your app makes %s; this makes one\n", docURL, doc)
	}
	body := `{"counter":"likes"}`
	if layoutOf(c).OnDocs() {
		body = fmt.Sprintf(`{"counter":%q,"field":%q}`, doc, field)
	}
	signedIn, later := "", ""
	if s.AuthHost != "" {
		fmt.Fprintf(w, "export %s=%s\n", authemu.EnvHost, s.AuthHost)
		fmt.Fprintf(w, "TOKEN=$(%s token you@example.com)\n", selfCommand())
		signedIn = ` -H "Authorization: Bearer $TOKEN"`
	}
	if !aggregate {
		fmt.Fprintf(w, "curl -s -X POST %s/Increment%s -H 'Content-Type: application/json' -d '%s'\n", s.FunctionsURL, signedIn, body)
		later = "sleep 1; "
	}
	fmt.Fprintf(w, "%scurl -s -H 'Authorization: Bearer owner' '%s?mask.fieldPaths=%s'\n", later, docURL, field)
	if window != "" {
		env := fmt.Sprintf("%s=%s", EnvEmulator, s.EmulatorHost)
		if c.Project != stack.DefaultProject {
			env += fmt.Sprintf(" %s=%s", setup.EnvProject, c.Project)
		}
		fmt.Fprintf(w, "%s %s get %s %s\n", env, selfCommand(), doc, window)
		fmt.Fprintf(w, "%s %s series %s %s\n", env, selfCommand(), doc, series)
	}
}

func envInt(key string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(key)); err == nil {
		return n
	}
	return def
}

// exampleDocument is a document of the declared collection coll (or coll
// itself, one document): pages/home, users/u1/posts/home.
func exampleDocument(coll string) string {
	if strings.Count(coll, "/")%2 == 1 {
		return coll
	}
	return strings.ReplaceAll(coll, "*", "u1") + "/home"
}

// listed is items as a sentence lists them: "a", "a and b", "a, b and c".
func listed(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}
