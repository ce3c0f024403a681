package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/tallycounters/tally/deploy"
)

// runRules prints the security rules, or publishes them.
func runRules(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("rules", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o deploy.RulesOptions
	fs.StringVar(&o.Collection, "collection", "counters", "collection of counters")
	fs.BoolVar(&o.SignedInReads, "signed-in-reads", false, "only signed-in users may read counters")
	publish := fs.Bool("publish", false, "publish the rules to --project's --database (application default credentials)")
	project := fs.String("project", "", "Google Cloud project, with --publish")
	database := fs.String("database", "(default)", "Firestore database, with --publish")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	src, err := deploy.Rules(o)
	if err != nil {
		fmt.Fprintf(stderr, "tally rules: %v\n", err)
		return 2
	}
	if !*publish {
		fmt.Fprint(stdout, src)
		return 0
	}
	if *project == "" {
		fmt.Fprintln(stderr, "tally rules: --publish needs --project")
		return 2
	}
	changed, err := deploy.Publish(context.Background(), *project, *database, src)
	if err != nil {
		fmt.Fprintf(stderr, "tally rules: %v\n", err)
		return 1
	}
	if changed {
		fmt.Fprintf(stdout, "published the rules to %s\n", deploy.ReleaseName(*project, *database))
	} else {
		fmt.Fprintf(stdout, "%s already serves these rules\n", deploy.ReleaseName(*project, *database))
	}
	return 0
}
