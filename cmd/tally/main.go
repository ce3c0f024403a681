// Command tally administers counters and runs tally locally.
//
//	tally create | incr | get | sum | series | watch | reshard | reset | reconcile | delete
//	tally config   print the configuration in force
//	tally rules    print or publish the Firestore security rules
//	tally indexes  print the Firestore indexes the declared counts need
//	tally serve    run the emulator, the functions and the event bridge
//	tally token    sign in on the local Auth emulator and print an ID token
//	tally bench    measure tally against the baselines
//	tally extension takeover   take over the firestore-counter extension's counters
//
// Every command reads the same TALLY_* environment as the functions, and its
// flags override it. Counter commands use the emulator in
// FIRESTORE_EMULATOR_HOST, or a project with application default
// credentials. Each command takes -h and --version.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tallycounters/tally/internal/tools/bench"
)

func main() {
	bench.InstanceMain() // the bench runs its Rollup instances as copies of this program
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// usageError is a mistake in how a command was called: exit status 2.
type usageError struct{ error }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// run runs the command line args and returns the exit status: 0, 1 when
// the command failed, 2 when it was called wrongly.
func run(args []string, stdout, stderr io.Writer) int {
	root := newRoot(stdout, stderr)
	root.SetArgs(args)
	cmd, err := root.ExecuteC()
	if err == nil {
		return 0
	}
	name := strings.TrimSpace(cmd.CommandPath())
	fmt.Fprintf(stderr, "%s: %v\n", name, err)
	var ue usageError
	if errors.As(err, &ue) || strings.HasPrefix(err.Error(), "unknown command") {
		fmt.Fprintf(stderr, "Run '%s -h' for usage.\n", name)
		return 2
	}
	return 1
}

// newRoot builds the tally command and its subcommands.
func newRoot(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "tally",
		Short: "Exact, hot-spot-free distributed counters for Cloud Firestore",
		Long: "tally administers counters, serves the functions locally and measures them.\n\n" +
			"Every command reads the same TALLY_* environment as the functions (see 'tally config'),\n" +
			"and its flags override it. Counter commands work on the emulator in\n" +
			"FIRESTORE_EMULATOR_HOST, or on a Google Cloud project with application default credentials.",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.AddGroup(&cobra.Group{ID: "counters", Title: "Counters:"}, &cobra.Group{ID: "local", Title: "Running and measuring:"})
	for _, c := range counterCommands() {
		c.GroupID = "counters"
		root.AddCommand(c)
	}
	for _, c := range []*cobra.Command{serveCommand(), tokenCommand(), benchCommand(), configCommand(), rulesCommand(), indexesCommand(), extensionCommand(), doctorCommand()} {
		c.GroupID = "local"
		root.AddCommand(c)
	}
	root.SetHelpCommandGroupID("local")
	root.SetCompletionCommandGroupID("local")
	v := version()
	var every func(*cobra.Command)
	every = func(c *cobra.Command) {
		c.Version = v // so that every command takes --version
		c.SetVersionTemplate("tally {{.Version}}\n")
		for _, sub := range c.Commands() {
			every(sub)
		}
	}
	root.InitDefaultCompletionCmd()
	root.InitDefaultHelpCmd()
	every(root)
	return root
}

// version is the module's version from the build information, with the
// revision it was built from when known.
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown)"
	}
	v := info.Main.Version
	if v == "" {
		v = "(devel)"
	}
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			v += " " + s.Value[:12]
		}
		if s.Key == "vcs.modified" && s.Value == "true" {
			v += "+dirty"
		}
	}
	return v + " " + info.GoVersion
}

// exactArgs wants n positional arguments, named in the message.
func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usagef("want %s, got %d arguments", what, len(args))
		}
		return nil
	}
}
