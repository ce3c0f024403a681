package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/tallycounters/tally/deploy"
	"github.com/tallycounters/tally/internal/extension"
)

// rulesCommand prints the security rules, or publishes them.
func rulesCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "rules",
		Short: "Print the Firestore security rules, or publish them (--publish); with TALLY_COUNTS, tally's part of the app's rules and an example",
		Args:  exactArgs(0, "no arguments"),
	}
	s := configFlags(cmd)
	var o deploy.RulesOptions
	cmd.Flags().BoolVar(&o.SignedInReads, "signed-in-reads", false, "only signed-in users may read counters")
	publish := cmd.Flags().Bool("publish", false, "publish the rules to --project's --database (application default credentials)")
	merge := cmd.Flags().String("merge", "", "with TALLY_COUNTS, print the app's rules in `FILE` (its firestore.rules) with tally's merged in, and on stderr what its own rules of a counted collection must add")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		cfg, err := s.config()
		if err != nil {
			return err
		}
		o.Collection = layoutOf(cfg).Collection
		src, err := deploy.Rules(o)
		if layoutOf(cfg).OnDocs() {
			src, err = deploy.CountsRules(layoutOf(cfg), o.SignedInReads)
		}
		if ext := extensionOf(cfg); err == nil && len(ext) > 0 {
			src, err = withExtension(src, ext, o.SignedInReads)
		}
		if err != nil {
			return usageError{err}
		}
		if *merge != "" {
			if src, err = mergeInto(cmd, *merge, src, layoutOf(cfg).OnDocs() || !cfg.ExtensionCounters.None()); err != nil {
				return err
			}
		}
		if !*publish {
			fmt.Fprint(cmd.OutOrStdout(), src)
			return nil
		}
		if cfg.Project == "" {
			return usagef("--publish needs --project")
		}
		changed, err := deploy.Publish(context.Background(), cfg.Project, cfg.Database, src)
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

// mergeInto is the app's rules in file with tally's rules src merged in;
// it says on stderr what the app's own matches of counted collections
// must add.
func mergeInto(cmd *cobra.Command, file, src string, onDocs bool) (string, error) {
	if !onDocs {
		return "", usagef("--merge merges tally's rules for counts on documents, or for the extension's clients, into an app's: set TALLY_COUNTS (or --counts), or TALLY_EXTENSION_COUNTERS (or --extension-counters)")
	}
	app, err := os.ReadFile(file)
	if err != nil {
		return "", usageError{fmt.Errorf("--merge: %w", err)}
	}
	m, err := deploy.MergeRules(string(app), src)
	if err != nil {
		return "", usageError{fmt.Errorf("--merge %s: %w", file, err)}
	}
	for _, n := range m.Notes {
		fmt.Fprintf(cmd.ErrOrStderr(), "tally rules: %s\n", n)
	}
	return m.Rules, nil
}
