package main

import (
	"fmt"
	"os"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/tallycounters/tally/internal/core/calendar"
	"github.com/tallycounters/tally/internal/httpjson"
	"github.com/tallycounters/tally/internal/trigger"
)

// configCommand prints the configuration in force: the same variables, read
// by the same code, as the functions, with this command's flags on top.
func configCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Print the configuration in force, or check it (--check)",
		Long: "config prints every TALLY_* variable with the value the functions and the other\n" +
			"commands use, and where it came from. A bad value is an error naming its variable,\n" +
			"with exit status 2; --check prints nothing else, for scripts such as deploy.sh.",
		Args: exactArgs(0, "no arguments"),
	}
	s := configFlags(cmd)
	cmd.Flags().BoolVar(&s.json, "json", false, "print one JSON object")
	check := cmd.Flags().Bool("check", false, "only check the configuration")
	boundaries := cmd.Flags().Bool("boundaries", false, "print the schedule of the boundary job of the windows declared, 'CRON TIME_ZONE' (in UTC, with a run at every start of a bucket in the next ten years, and 15, 30 and 45 minutes after, within its hour, to find what a lost part left due), for deploy.sh; nothing if none is")
	triggers := cmd.Flags().Bool("triggers", false, "print the path pattern of each Rollup trigger, one per line, for deploy.sh: of writes, or, followed by 'created', 'updated' or 'deleted', of those")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		cfg, err := s.config()
		if err != nil || *check {
			return err
		}
		if *boundaries {
			if u := layoutOf(cfg).SmallestUnit(); u != "" {
				// In UTC, as Cloud Scheduler runs a schedule in a zone by
				// its wall clock, which skips or repeats a start where the
				// clocks change.
				fmt.Fprintln(cmd.OutOrStdout(), calendar.Rechecked(u.Schedule(layoutOf(cfg).Zone, time.Now())), "Etc/UTC")
			}
			return nil
		}
		if *triggers {
			for _, tr := range trigger.Of(layoutOf(cfg), extensionOf(cfg)) {
				switch tr.Type {
				case trigger.Created:
					fmt.Fprintln(cmd.OutOrStdout(), tr.Pattern, "created")
				case trigger.Updated:
					fmt.Fprintln(cmd.OutOrStdout(), tr.Pattern, "updated")
				case trigger.Deleted:
					fmt.Fprintln(cmd.OutOrStdout(), tr.Pattern, "deleted")
				default:
					fmt.Fprintln(cmd.OutOrStdout(), tr.Pattern)
				}
			}
			return nil
		}
		vars := cfg.Vars()
		from := s.sources()
		host := os.Getenv(EnvEmulator)
		if s.json {
			out := map[string]string{EnvEmulator: host}
			for _, v := range vars {
				out[v.Name] = v.Value
			}
			cmd.OutOrStdout().Write(httpjson.Encode(out))
			return nil
		}
		tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
		for _, v := range vars {
			fmt.Fprintf(tw, "%s=%s\t# %s\n", v.Name, v.Value, from[v.Name])
		}
		where := "unset: counter commands use a Google Cloud project"
		if host != "" {
			where = "environment: counter commands use this emulator"
		}
		fmt.Fprintf(tw, "%s=%s\t# %s\n", EnvEmulator, host, where)
		return tw.Flush()
	}
	return cmd
}
