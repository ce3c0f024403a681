package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"cloud.google.com/go/firestore"
	"github.com/spf13/cobra"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tallycounters/tally/counter"
	"github.com/tallycounters/tally/increment"
	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/extension"
	"github.com/tallycounters/tally/internal/httpjson"
	"github.com/tallycounters/tally/setup"
)

// admin is what a counter command works with.
type admin struct {
	fs     *firestore.Client
	cfg    setup.Config
	field  string // the count a command on one count names: its second argument
	json   bool
	stdout io.Writer
	stderr io.Writer
}

// print writes v as JSON, or text for a person.
func (a *admin) print(v any, text string, args ...any) {
	if a.json {
		a.stdout.Write(httpjson.Encode(v))
		return
	}
	fmt.Fprintf(a.stdout, text+"\n", args...)
}

// An action works on the counter named id (an id, or a document path for
// counts on documents) and, for commands on one count, its field.
type action = func(ctx context.Context, a *admin, c *counter.Client, id string) error

// ownNames, as a command's annotation, says that it checks the name it is
// given itself (tally rank takes a collection's, with --value).
const ownNames = "own names"

// extensionNames, as a command's annotation, says that it takes the
// documents of the firestore-counter extension's counters too
// (TALLY_EXTENSION_COUNTERS), which no TALLY_COUNTS may declare.
const extensionNames = "extension names"

// counterCommand builds a command on one counter (or, with args allowing
// none, on all): its own flags, the configuration's, and an action.
func counterCommand(use, short string, args cobra.PositionalArgs, build func(*cobra.Command) action) *cobra.Command {
	cmd := &cobra.Command{Use: use, Short: short, Args: args}
	s := configFlags(cmd)
	s.clientFlags()
	act := build(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		cfg, err := s.config()
		if err != nil {
			return err
		}
		id, field := "", ""
		if len(args) > 0 {
			id = args[0]
		}
		if len(args) > 1 {
			field = args[1]
		}
		checkName := func(recorded bool) error {
			if _, ext := extensionOf(cfg).Of(id); ext && cmd.Annotations[extensionNames] != "" {
				return nil // a document of the extension's counters
			}
			if err := layoutOf(cfg).CheckName(id); err != nil && id != "" && cmd.Annotations[ownNames] == "" {
				return usageError{notDeclared(err, id, recorded)}
			}
			return nil
		}
		// With the layout given, a bad name is refused before connecting;
		// otherwise by the layout the database records.
		given := s.layoutGiven()
		if err := checkName(true); given && err != nil {
			return err
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		fs, cfg, recorded, err := s.open(ctx, cfg)
		if err != nil {
			return err
		}
		defer fs.Close()
		if !given {
			if err := checkName(recorded); err != nil {
				return err
			}
		}
		// An admin's typo must not make a counter: TALLY_AUTO_CREATE is
		// for Increment's clients.
		c := counter.New(fs, counter.Options{Layout: cfg.Layout, DefaultShards: cfg.DefaultShards,
			ShardCacheTTL: cfg.CacheTTL, Spacing: cfg.Spacing, Timeout: s.timeout, RefuseMissing: true,
			Progress: func(line string) { fmt.Fprintln(cmd.ErrOrStderr(), line) }})
		a := &admin{fs: fs, cfg: cfg, field: field, json: s.json, stdout: cmd.OutOrStdout(), stderr: cmd.ErrOrStderr()}
		err = act(ctx, a, c, id)
		switch {
		case err == nil || errors.Is(err, context.Canceled):
			return nil
		case errors.Is(err, counter.ErrNotFound) && id != "":
			return missing(layoutOf(cfg), id, false)
		}
		return explain(err, s.timeout)
	}
	return cmd
}

// missing says, in one sentence, that there is no counter id (yet, for a
// watch that waits for it), and how one is made.
func missing(l core.Layout, id string, yet bool) error {
	when := ""
	if yet {
		when = " yet"
	}
	if l.OnDocs() {
		return fmt.Errorf("there is no document %s%s: tally counts documents that the app has made", id, when)
	}
	return fmt.Errorf("there is no counter %s%s: 'tally create %s' makes one", id, when, id)
}

// counterCommands are the commands on one counter, in the order help
// lists them.
func counterCommands() []*cobra.Command {
	one := exactArgs(1, "one counter id (a document path for counts on documents)")
	count := func(cmd *cobra.Command, args []string) error {
		if len(args) != 1 && len(args) != 2 {
			return usagef("want one counter id, and for counts on documents a document path and its count field, got %d arguments", len(args))
		}
		return nil
	}
	return []*cobra.Command{
		createCommand(one),
		incrCommand(count),
		getCommand(count),
		seriesCommand(exactArgs(2, "a document path and its window's field")),
		sumCommand(count),
		watchCommand(count),
		rankCommand(),
		boardCommand(),
		reshardCommand(one),
		resetCommand(one),
		reconcileCommand(),
		deleteCommand(one),
	}
}

// createCommand is tally create: a counter and its shards.
func createCommand(args cobra.PositionalArgs) *cobra.Command {
	return counterCommand("create ID", "Create a counter with its shards", args, func(cmd *cobra.Command) action {
		shards := cmd.Flags().Int("shards", core.DefaultShards, "number of shards (a counter grows when busy, if the rollup grows counters)")
		return func(ctx context.Context, a *admin, c *counter.Client, id string) error {
			if err := c.Create(ctx, id, *shards); errors.Is(err, counter.ErrExists) {
				return fmt.Errorf("%s exists already: 'tally reshard %s --shards N' changes its shards", id, id)
			} else if err != nil {
				return err
			}
			a.print(map[string]any{"counter": id, "shards": *shards}, "created %s with %s", id, shardsOf(*shards))
			return nil
		}
	})
}

// incrCommand is tally incr: an increment, as the Increment function makes it.
func incrCommand(args cobra.PositionalArgs) *cobra.Command {
	return counterCommand("incr ID [FIELD]", "Add to a counter, as the Increment function does", args, func(cmd *cobra.Command) action {
		by := cmd.Flags().Int64("by", 1, "amount to add: not 0, at most TALLY_MAX_STEP either way")
		return func(ctx context.Context, a *admin, c *counter.Client, id string) error {
			if err := increment.ValidateStep(*by, a.cfg.MaxStep); err != nil {
				return usageError{err}
			}
			if err := a.checkCount(id); err != nil {
				return err
			}
			if err := c.Add(ctx, id, a.field, *by); err != nil {
				return err
			}
			a.print(a.withField(map[string]any{"counter": id, "by": *by}), "%s %+d", a.named(id), *by)
			return nil
		}
	})
}

// getCommand is tally get: a total, count, aggregate, window or trend, in one read.
func getCommand(args cobra.PositionalArgs) *cobra.Command {
	cmd := counterCommand("get ID [FIELD]", "Read a counter's total, or a document's count, aggregate, window or trend (its score now), "+
		"or a counter of the firestore-counter extension's that tally moves into its document (TALLY_EXTENSION_COUNTERS), "+
		"or with no FIELD every field tally keeps on the document: one document read", args, func(*cobra.Command) action {
		return func(ctx context.Context, a *admin, c *counter.Client, id string) error {
			if ext, ok := extensionOf(a.cfg).Of(id); ok && !layoutOf(a.cfg).Matches(id) {
				return a.getExtension(ctx, ext, id)
			}
			if a.field == "" && layoutOf(a.cfg).OnDocs() {
				return a.getAll(ctx, c, id)
			}
			if err := a.checkKept(id); err != nil {
				return err
			}
			v, err := c.Value(ctx, id, a.field)
			if err != nil {
				return err
			}
			a.print(a.withField(map[string]any{"counter": id, "total": v}), "%s %s", a.named(id), a.shown(id, a.field, v))
			return nil
		}
	})
	cmd.Annotations = map[string]string{extensionNames: "the extension's documents too"}
	return cmd
}

// getExtension prints a counter of the firestore-counter extension's that
// tally moves into its document d (or each that ext declares there): the
// document's field, which holds every shard write up to its moved_as_of.
func (a *admin) getExtension(ctx context.Context, ext extension.Counter, d string) error {
	fields := ext.Fields
	if a.field != "" {
		if !ext.Counts(strings.Split(a.field, ".")) {
			return usagef("%s counts %s (TALLY_EXTENSION_COUNTERS), not %s", d, strings.Join(ext.Fields, ", "), a.field)
		}
		fields = []string{a.field}
	}
	snap, err := a.fs.Doc(d).Get(ctx)
	if status.Code(err) == codes.NotFound {
		return fmt.Errorf("%s does not exist yet: a first move of its clients' shards makes it", d)
	}
	if err != nil {
		return err
	}
	book, _ := snap.Data()[core.FieldBookkeeping].(map[string]any)
	asOf, _ := book[extension.FieldMovedAsOf].(time.Time)
	for _, f := range fields {
		v, _ := snap.DataAtPath(strings.Split(f, "."))
		n, _ := v.(int64)
		a.print(map[string]any{"counter": d, "field": f, "total": n, "as_of": asOf.UTC().Format(time.RFC3339Nano)},
			"%s %s %d (the extension's clients', moved as of %s)", d, f, n, asOf.UTC().Format(time.RFC3339))
	}
	return nil
}

// seriesCommand is tally series: a window's buckets and their counts.
func seriesCommand(args cobra.PositionalArgs) *cobra.Command {
	return counterCommand("series ID FIELD", "Print a window's series: each bucket it keeps, and its count", args, func(*cobra.Command) action {
		return func(ctx context.Context, a *admin, c *counter.Client, id string) error {
			buckets, err := c.Series(ctx, id, a.field)
			if err != nil {
				return usageError{err}
			}
			if a.json {
				// Each start in UTC, as the document's series names it: an
				// offset of RFC 3339 holds no seconds, which a zone's may.
				for i := range buckets {
					buckets[i].Start = buckets[i].Start.UTC()
				}
				a.print(map[string]any{"counter": id, "field": a.field, "series": buckets}, "")
				return nil
			}
			tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintf(tw, "bucket starts (%s)\t%s\n", zoneOf(layoutOf(a.cfg)), a.field)
			for _, b := range buckets {
				fmt.Fprintf(tw, "%s\t%d\n", b.Start.In(zoneOf(layoutOf(a.cfg))).Format("2006-01-02 15:04 MST"), b.Count)
			}
			tw.Flush()
			return nil
		}
	})
}

// sumCommand is tally sum: the shards' sum, strongly consistent.
func sumCommand(args cobra.PositionalArgs) *cobra.Command {
	return counterCommand("sum ID [FIELD]", "Add up a counter's shards: strongly consistent", args, func(*cobra.Command) action {
		return func(ctx context.Context, a *admin, c *counter.Client, id string) error {
			if err := a.checkCount(id); err != nil {
				return err
			}
			sum, err := c.Sum(ctx, id, a.field)
			if err != nil {
				return err
			}
			a.print(a.withField(map[string]any{"counter": id, "sum": sum}), "%s %d (sum of the shards)", a.named(id), sum)
			return nil
		}
	})
}

// watchCommand is tally watch: a total as it changes.
func watchCommand(args cobra.PositionalArgs) *cobra.Command {
	return counterCommand("watch ID [FIELD]", "Print a counter's total as it changes, until Ctrl-C", args, func(cmd *cobra.Command) action {
		return func(ctx context.Context, a *admin, c *counter.Client, id string) error {
			if err := a.checkKept(id); err != nil {
				return err
			}
			if _, err := c.Get(ctx, id, a.field); errors.Is(err, counter.ErrNotFound) {
				fmt.Fprintf(a.stderr, "%s: %v; until then it reads 0\n", cmd.CommandPath(), missing(layoutOf(a.cfg), id, true))
			} else if err != nil {
				return err
			}
			for total, err := range c.Watch(ctx, id, a.field) {
				if err != nil {
					return err
				}
				a.print(a.withField(map[string]any{"counter": id, "total": total}), "%s %d", a.named(id), total)
			}
			return nil
		}
	})
}

// resetCommand is tally reset: shards set to 0, then folded.
func resetCommand(args cobra.PositionalArgs) *cobra.Command {
	return counterCommand("reset ID", "Set a counter's shards to 0, then fold its total", args, func(*cobra.Command) action {
		return func(ctx context.Context, a *admin, c *counter.Client, id string) error {
			if err := c.Reset(ctx, id); err != nil {
				return err
			}
			a.print(map[string]any{"counter": id, "reset": true}, "%s: shards set to 0, total folded", id)
			return nil
		}
	})
}

// deleteCommand is tally delete: a counter's shards, votes, keys and parent.
func deleteCommand(args cobra.PositionalArgs) *cobra.Command {
	return counterCommand("delete ID", "Delete a counter: its shards, votes and keys, then its parent (on documents: its counts, never the document)", args, func(*cobra.Command) action {
		return func(ctx context.Context, a *admin, c *counter.Client, id string) error {
			if err := c.Delete(ctx, id); err != nil {
				return err
			}
			a.print(map[string]any{"counter": id, "deleted": true}, "deleted %s", id)
			return nil
		}
	})
}

func reshardCommand(args cobra.PositionalArgs) *cobra.Command {
	return counterCommand("reshard ID --shards N", "Change a counter's number of shards; its value never changes", args, func(cmd *cobra.Command) action {
		shards := cmd.Flags().Int("shards", 0, "new number of shards (required)")
		cacheTTL := cmd.Flags().Duration("cache-ttl", 0, "how long the deployed Increment caches num_shards (TALLY_SHARD_CACHE_TTL); shrinking waits it out")
		return func(ctx context.Context, a *admin, c *counter.Client, id string) error {
			if *shards < 1 {
				return usagef("--shards is required and must be at least 1")
			}
			if cmd.Flags().Changed("cache-ttl") {
				c = c.WithShardCacheTTL(*cacheTTL)
			}
			old, err := c.Reshard(ctx, id, *shards, func(d time.Duration, why string) {
				fmt.Fprintf(a.stderr, "%s: waiting %v %s\n", id, d.Round(time.Millisecond), why)
			})
			if err != nil {
				return err
			}
			if old == *shards {
				a.print(map[string]any{"counter": id, "from": old, "to": *shards}, "%s: on %s already", id, shardsOf(old))
				return nil
			}
			a.print(map[string]any{"counter": id, "from": old, "to": *shards}, "%s: %d -> %d shards", id, old, *shards)
			return nil
		}
	})
}

func reconcileCommand() *cobra.Command {
	upToOne := func(cmd *cobra.Command, args []string) error {
		if len(args) > 1 {
			return usagef("want one counter id or --all, got %d arguments", len(args))
		}
		return nil
	}
	return counterCommand("reconcile ID | --all", "Fold a counter now and report how far its total had drifted", upToOne, func(cmd *cobra.Command) action {
		all := cmd.Flags().Bool("all", false, "reconcile every counter; one that cannot be folded is reported, and the others are folded all the same (exit status 1 if any was not)")
		return func(ctx context.Context, a *admin, c *counter.Client, id string) error {
			report := func(d counter.Drift, err error) {
				if err != nil {
					a.print(map[string]any{"counter": d.Counter, "error": err.Error()}, "%s: not folded: %v", d.Counter, err)
					return
				}
				repaired := ""
				if d.Drift != 0 {
					repaired = ", repaired"
				}
				name := d.Counter
				if d.Field != "" {
					name += " " + d.Field
				}
				a.print(d, "%s: total %d, shards %d, drift %+d%s", name, d.Total, d.Sum, d.Drift, repaired)
			}
			switch {
			case *all && id != "":
				return usagef("give a counter id or --all, not both")
			case *all:
				return c.ReconcileAll(ctx, report)
			case id == "":
				return usagef("give a counter id, or --all")
			}
			ds, err := c.Reconcile(ctx, id)
			if err != nil {
				return err
			}
			for _, d := range ds {
				report(d, nil)
			}
			return nil
		}
	})
}

// named is how a command's text names the count it acts on: the id, then
// the field if one was given.
func (a *admin) named(id string) string {
	if a.field == "" {
		return id
	}
	return id + " " + a.field
}

// withField adds the field given, if any, to a command's JSON answer.
func (a *admin) withField(m map[string]any) map[string]any {
	if a.field != "" {
		m["field"] = a.field
	}
	return m
}

// checkCount is a usage error unless id and the field given name a count.
func (a *admin) checkCount(id string) error {
	if _, err := layoutOf(a.cfg).Check(id, a.field); err != nil {
		return usageError{err}
	}
	return nil
}

// checkKept is a usage error unless id and the field given name a field
// tally keeps: a count, an aggregate, a window or a trend. Its message
// lists them all.
func (a *admin) checkKept(id string) error {
	if layoutOf(a.cfg).Kept(id, a.field) != "" {
		return nil
	}
	err := a.checkCount(id)
	if fields := layoutOf(a.cfg).KeptFields(id); err != nil && layoutOf(a.cfg).OnDocs() && len(fields) > 0 {
		return usagef("%q is not a field tally keeps on %s: it keeps %s", a.field, id, strings.Join(fields, ", "))
	}
	return err
}

// getAll prints every field tally keeps on the document id, from one read.
func (a *admin) getAll(ctx context.Context, c *counter.Client, id string) error {
	values, err := c.Values(ctx, id)
	if err != nil {
		return err
	}
	if a.json {
		a.print(map[string]any{"counter": id, "fields": values}, "")
		return nil
	}
	for _, f := range layoutOf(a.cfg).KeptFields(id) {
		a.print(nil, "%s %s %s", id, f, a.shown(id, f, values[f]))
	}
	return nil
}

// zoneOf is the time zone of windows' buckets.
func zoneOf(l core.Layout) *time.Location {
	if l.Zone == nil {
		return time.UTC
	}
	return l.Zone
}

// shardsOf is "1 shard" or "n shards".
func shardsOf(n int) string {
	if n == 1 {
		return "1 shard"
	}
	return fmt.Sprintf("%d shards", n)
}
