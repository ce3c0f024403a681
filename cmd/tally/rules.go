package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/pmezard/go-difflib/difflib"
	"github.com/spf13/cobra"

	"github.com/tallycounters/tally/deploy"
	"github.com/tallycounters/tally/internal/extension"
	"github.com/tallycounters/tally/setup"
)

// EnvRulesAPI, if set, is a server of the Firebase Rules API that the
// tally command reads and publishes rules through instead of Google's,
// with no credentials: a stand-in, for tests.
const EnvRulesAPI = "TALLY_RULES_API"

// rulesCommand prints the security rules, merged into an app's or not,
// or what a merge changes, or publishes them.
func rulesCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "rules",
		Short: "Print tally's Firestore security rules, merged into your app's (--merge FILE, --live), or publish them (--publish)",
		Long: "rules prints tally's security rules for the configuration: the guide's counters, counts on\n" +
			"documents (TALLY_COUNTS, with an example of the app's own rules), the firestore-counter\n" +
			"extension's clients' (TALLY_EXTENSION_COUNTERS). --merge FILE merges them into your app's\n" +
			"rules file, --live into the rules in force for --project's --database: tally's part goes\n" +
			"between two marker comments at the head of the block of documents (a merge again replaces\n" +
			"it), and every rule of yours stays. --diff prints what the merge changes, --publish\n" +
			"publishes it. tally publishes no ruleset that drops a rule it did not write: --publish\n" +
			"alone refuses when rules of yours are in force.",
		Args: exactArgs(0, "no arguments"),
	}
	s := configFlags(cmd)
	var o deploy.RulesOptions
	cmd.Flags().BoolVar(&o.SignedInReads, "signed-in-reads", false, "only signed-in users may read counters")
	publish := cmd.Flags().Bool("publish", false, "publish the rules to --project's --database (application default credentials): merged with --merge or --live; alone, only where no rules but tally's are in force")
	merge := cmd.Flags().String("merge", "", "merge tally's rules into the app's rules in `FILE` (its firestore.rules), and say on stderr what its own rules of a counted collection must add")
	live := cmd.Flags().Bool("live", false, "merge tally's rules into the rules in force for --project's --database")
	diff := cmd.Flags().Bool("diff", false, "with --merge or --live, print what the merge changes of the rules it merges into (a unified diff), not the rules")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		cfg, err := s.config()
		if err != nil {
			return err
		}
		src, err := tallyRules(cfg, o)
		if err != nil {
			return usageError{err}
		}
		rel := deploy.Release{Project: cfg.Project, Database: cfg.Database, Endpoint: os.Getenv(EnvRulesAPI)}
		base, from, err := rulesBase(cmd.Context(), rel, *merge, *live, *publish || *diff)
		if err != nil {
			return err
		}
		out := src
		if !deploy.Replaceable(base) {
			if out, err = mergeInto(cmd, base, from, src); err != nil {
				return err
			}
		} else if *merge == "" && !*live && *publish && base != "" {
			fmt.Fprintf(cmd.ErrOrStderr(), "tally rules: the rules in force are tally's alone: replacing them\n")
		}
		switch {
		case *diff:
			return printDiff(cmd, base, out, from)
		case !*publish:
			fmt.Fprint(cmd.OutOrStdout(), out)
			return nil
		case *merge == "" && !*live && !deploy.Replaceable(base):
			return usagef("the rules in force for %s are not tally's alone, and --publish alone would drop them: merge into them (--live) "+
				"or into your rules file (--merge FILE); tally publishes no ruleset that drops a rule of yours", deploy.ReleaseName(cfg.Project, cfg.Database))
		}
		changed, err := rel.Publish(cmd.Context(), out)
		if err != nil {
			return err
		}
		if changed {
			fmt.Fprintf(cmd.OutOrStdout(), "published the rules to %s\n", deploy.ReleaseName(cfg.Project, cfg.Database))
		} else {
			fmt.Fprintf(cmd.OutOrStdout(), "%s already serves these rules\n", deploy.ReleaseName(cfg.Project, cfg.Database))
		}
		return nil
	}
	return cmd
}

// tallyRules are tally's rules for cfg: the guide's, or for counts on
// documents, with the extension clients' if any.
func tallyRules(cfg setup.Config, o deploy.RulesOptions) (string, error) {
	o.Collection = layoutOf(cfg).Collection
	src, err := deploy.Rules(o)
	if layoutOf(cfg).OnDocs() {
		src, err = deploy.CountsRules(layoutOf(cfg), o.SignedInReads)
	}
	if ext := extensionOf(cfg); err == nil && len(ext) > 0 {
		src, err = withExtension(src, ext, o.SignedInReads)
	}
	return src, err
}

// rulesBase is what tally's rules are merged into, and its name: the
// app's rules file, or the rules in force; with neither asked for, the
// rules in force where needed (to publish, or diff) and nothing else.
func rulesBase(ctx context.Context, rel deploy.Release, file string, live, needLive bool) (base, from string, err error) {
	switch {
	case file != "" && live:
		return "", "", usagef("--merge FILE and --live each name what to merge into: give one")
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			return "", "", usageError{fmt.Errorf("--merge: %w", err)}
		}
		return string(b), file, nil
	case !live && !needLive:
		return "", "", nil
	case rel.Project == "":
		return "", "", usagef("--live, --publish and --diff read the rules in force: give --project")
	}
	base, err = rel.Live(ctx)
	return base, deploy.ReleaseName(rel.Project, rel.Database), err
}

// printDiff prints what turning base (named from) into merged changes, as
// a unified diff.
func printDiff(cmd *cobra.Command, base, merged, from string) error {
	d, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{A: difflib.SplitLines(base), B: difflib.SplitLines(merged),
		FromFile: from, ToFile: from + ", with tally's rules", Context: 3})
	if err != nil {
		return err
	}
	if d == "" {
		fmt.Fprintf(cmd.OutOrStdout(), "%s holds tally's rules as they are: nothing to change\n", from)
		return nil
	}
	fmt.Fprint(cmd.OutOrStdout(), d)
	return nil
}

// indexesCommand prints the indexes the declared counts need.
func indexesCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "indexes",
		Short: "Print the Firestore indexes the declared counts need, as firestore.indexes.json",
		Long: "indexes prints, in the format of firestore.indexes.json (the Firebase CLI's\n" +
			"'firebase deploy --only firestore:indexes' and 'gcloud firestore indexes' take it),\n" +
			"the composite indexes tally's queries need (a count with filters on two fields or\n" +
			"more) and the fields of tally's bookkeeping that are kept out of the indexes.\n" +
			"deploy.sh creates them; --lines prints them as it reads them.",
		Args: exactArgs(0, "no arguments"),
	}
	s := configFlags(cmd)
	lines := cmd.Flags().Bool("lines", false, "print one line each, 'composite GROUP SCOPE FIELD...' or 'exempt GROUP FIELD', for deploy.sh")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		cfg, err := s.config()
		if err != nil {
			return err
		}
		f := deploy.Indexes(layoutOf(cfg))
		if *lines {
			for _, l := range f.Lines() {
				fmt.Fprintln(cmd.OutOrStdout(), l)
			}
			return nil
		}
		b, err := json.MarshalIndent(f, "", "  ")
		if err != nil {
			return err
		}
		fmt.Fprintf(cmd.OutOrStdout(), "%s\n", b)
		return nil
	}
	return cmd
}

// withExtension is tally's rules src with the rules of the extension's
// clients of the counters declared in.
func withExtension(src string, counters extension.Counters, signedInReads bool) (string, error) {
	ext, err := deploy.ExtensionRules(counters, signedInReads)
	if err != nil {
		return "", err
	}
	return deploy.WithExtension(src, ext)
}

// mergeInto is the app's rules, base (from file or release from), with
// tally's rules src merged in; it says on stderr what the app's own
// matches of counted collections must add.
func mergeInto(cmd *cobra.Command, base, from, src string) (string, error) {
	m, err := deploy.MergeRules(base, src)
	if err != nil {
		return "", usageError{fmt.Errorf("merge into %s: %w", from, err)}
	}
	for _, n := range m.Notes {
		fmt.Fprintf(cmd.ErrOrStderr(), "tally rules: %s\n", n)
	}
	return m.Rules, nil
}
