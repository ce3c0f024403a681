// Command tally administers counters and runs tally locally.
//
//	tally create | incr | get | sum | watch | reshard | reset | reconcile | delete
//	tally serve    run the emulator, the functions and the event bridge
//	tally bench    measure tally against the baselines
//	tally help     list the commands
//
// Counter commands use the emulator in FIRESTORE_EMULATOR_HOST, or a project
// with application default credentials; each takes -h.
package main

import (
	"fmt"
	"io"
	"os"

	_ "github.com/tallycounters/tally" // registers Increment and Rollup
)

// command is one subcommand: it parses its own flags from args.
type command struct {
	name, summary string
	run           func(args []string, stdout, stderr io.Writer) int
}

func commands() []command {
	return []command{
		{"create", "create a counter: tally create ID [--shards N]", runCreate},
		{"incr", "add to a counter: tally incr ID [--by N]", runIncr},
		{"get", "read a counter's total (one document read)", runGet},
		{"sum", "add up a counter's shards (strongly consistent)", runSum},
		{"watch", "print a counter's total as it changes, until Ctrl-C", runWatch},
		{"reshard", "change a counter's shards: tally reshard ID --shards N", runReshard},
		{"reset", "set a counter back to 0", runReset},
		{"reconcile", "repair a counter's total from its shards: tally reconcile ID | --all", runReconcile},
		{"delete", "delete a counter, its shards and its bookkeeping", runDelete},
		{"rules", "print the Firestore security rules, or publish them (--publish)", runRules},
		{"serve", "run the Firestore emulator, the functions and the event bridge locally", runServe},
		{"bench", "measure tally against a single-document counter and the per-event rollup", runBench},
		{"help", "list the commands", runHelp},
	}
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		runHelp(nil, stderr, stderr)
		return 2
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(args[1:], stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "tally: unknown command %q\n\n", args[0])
	runHelp(nil, stderr, stderr)
	return 2
}

func runHelp(_ []string, stdout, _ io.Writer) int {
	fmt.Fprintln(stdout, "usage: tally <command> [ID] [flags]\n\ncommands:")
	for _, c := range commands() {
		fmt.Fprintf(stdout, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(stdout, "\nRun 'tally <command> -h' for a command's flags.")
	return 0
}
