// Command tally runs tally locally and administers counters.
//
//	tally serve    run the emulator, the functions and the event bridge
//	tally bench    measure tally against the baselines
//	tally help     list the commands
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
	fmt.Fprintln(stdout, "usage: tally <command> [flags]\n\ncommands:")
	for _, c := range commands() {
		fmt.Fprintf(stdout, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(stdout, "\nRun 'tally <command> -h' for a command's flags.")
	return 0
}
