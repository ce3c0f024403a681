package main

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"cloud.google.com/go/firestore"
	"github.com/spf13/cobra"

	"github.com/tallycounters/tally/internal/extension"
	"github.com/tallycounters/tally/setup"
)

// extensionCommand is tally extension: what taking over from Firebase's
// firestore-counter extension needs.
func extensionCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "extension",
		Short: "Take over the counters of Firebase's firestore-counter extension (docs/extension.md)",
		Args:  exactArgs(0, "a subcommand: takeover"),
	}
	cmd.AddCommand(takeoverCommand())
	return cmd
}

// takeoverCommand is tally extension takeover: every shard and partial
// moved, and the workers' state removed.
func takeoverCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "takeover",
		Short: "Move every shard and partial of the extension's into its document, and remove the extension's workers' state",
		Long: "takeover moves the shards and partials the firestore-counter extension's clients and\n" +
			"workers left under every document TALLY_EXTENSION_COUNTERS (or --extension-counters)\n" +
			"declares (D/_counter_shards_/…) into the document's declared fields, one transaction\n" +
			"a document, as Rollup does; leaves, and lists, any other, and what a document cannot\n" +
			"take; and removes the extension's workers' state (its\n" +
			"INTERNAL_STATE_PATH and the workers under it). Run it once the extension is\n" +
			"uninstalled; it is safe beside Rollup and beside a running extension, and a second\n" +
			"run finds nothing more. It reports the documents, shards and totals it found.",
		Args: exactArgs(0, "no arguments"),
	}
	s := configFlags(cmd)
	s.clientFlags()
	dry := cmd.Flags().Bool("dry-run", false, "report what would be moved and removed; write nothing")
	state := cmd.Flags().StringSlice("state-path", []string{extension.DefaultStatePath}, "the `DOCUMENT` the extension kept its workers' state in (its INTERNAL_STATE_PATH)")
	parallel := cmd.Flags().Int("parallel", 16, "documents moved at once")
	quiet := cmd.Flags().Duration("quiet", extension.DefaultQuiet, "leave a client's shard written within this for a later run, or Rollup (its client may still wait for that write's answer: a move now would show it twice)")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		return s.connected(func(ctx context.Context, fs *firestore.Client, cfg setup.Config) error {
			return takeover(ctx, cmd, fs, cfg, s.json, extension.TakeoverOptions{Quiet: *quiet, DryRun: *dry, StatePaths: *state, Parallel: *parallel})
		})
	}
	return cmd
}

// takeover runs tally extension takeover with o, and reports it.
func takeover(ctx context.Context, cmd *cobra.Command, fs *firestore.Client, cfg setup.Config, json bool, o extension.TakeoverOptions) error {
	a := &admin{cfg: cfg, json: json, stdout: cmd.OutOrStdout(), stderr: cmd.ErrOrStderr()}
	began := time.Now()
	if cfg.ExtensionCounters.None() {
		return usagef("declare the extension's counters to take over: --extension-counters 'pages:likes,stats.views' (%s)", setup.EnvExtension)
	}
	o.Counters = extensionOf(cfg)
	o.Progress = func(line string) { fmt.Fprintln(a.stderr, "tally extension takeover: "+line) }
	r, err := extension.Takeover(ctx, fs, layoutOf(cfg), o)
	if err != nil {
		return err
	}
	printTakeover(a, r, o.DryRun, time.Since(began))
	if len(r.Failed) > 0 {
		return fmt.Errorf("%d documents were not moved into: run takeover again", len(r.Failed))
	}
	return nil
}

// printTakeover says what a takeover found and did.
func printTakeover(a *admin, r extension.Report, dry bool, took time.Duration) {
	totals := map[string]any{}
	var lines []string
	for _, p := range r.Totals.Paths() {
		name := strings.Join(p, ".")
		totals[name] = r.Totals.Of(p)
		lines = append(lines, fmt.Sprintf("  %s %v", name, r.Totals.Of(p)))
	}
	left := map[string]string{}
	for path, why := range r.Left {
		left[path] = why.Error()
	}
	if a.json {
		failed := map[string]string{}
		for d, why := range r.Failed {
			failed[d] = why.Error()
		}
		a.print(map[string]any{"dry_run": dry, "documents": r.Documents, "counters": r.Counters, "shards": r.Shards, "partials": r.Partials,
			"totals": totals, "left": left, "held": r.Held, "gone": r.Gone, "failed": failed, "state": r.State, "seconds": took.Seconds()}, "")
		return
	}
	verb, removed := "moved", "removed"
	if dry {
		verb, removed = "would move", "would remove"
	}
	fmt.Fprintf(a.stdout, "found the extension's counters: %d on %d documents, in %d shards and %d partials, holding\n",
		r.Counters, r.Documents, r.Shards, r.Partials)
	for _, l := range lines {
		fmt.Fprintln(a.stdout, l)
	}
	fmt.Fprintf(a.stdout, "%s them into their documents' fields (%s)\n", verb, took.Round(time.Millisecond))
	paths := make([]string, 0, len(left))
	for p := range left {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	if len(paths) > 0 {
		fmt.Fprintf(a.stdout, "left %d as they are, and why:\n", len(paths))
	}
	for _, p := range paths {
		fmt.Fprintf(a.stdout, "  %q: %s\n", p, left[p])
	}
	if r.Held > 0 {
		fmt.Fprintf(a.stdout, "left %d shards their clients wrote within --quiet for a later run, or Rollup\n", r.Held)
	}
	failed := make([]string, 0, len(r.Failed))
	for d := range r.Failed {
		failed = append(failed, d)
	}
	sort.Strings(failed)
	for _, d := range failed {
		fmt.Fprintf(a.stdout, "could not move into %s: %v; run takeover again\n", d, r.Failed[d])
	}
	for _, d := range r.Gone {
		fmt.Fprintf(a.stdout, "left the shards of %s: it is a document TALLY_COUNTS declares, and does not exist (tally makes none)\n", d)
	}
	if len(r.State) == 0 {
		fmt.Fprintln(a.stdout, "found none of the extension's workers' state")
		return
	}
	fmt.Fprintf(a.stdout, "%s the extension's workers' state: %s\n", removed, strings.Join(r.State, ", "))
}
