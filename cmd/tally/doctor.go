package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"cloud.google.com/go/firestore"
	"github.com/spf13/cobra"

	"github.com/tallycounters/tally/counter"
	"github.com/tallycounters/tally/deploy"
	"github.com/tallycounters/tally/internal/tools/doctor"
	"github.com/tallycounters/tally/setup"
)

// doctorCommand is tally doctor: on a project, or the local stack, each
// thing tally relies on, checked.
func doctorCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check, on your project (or the local stack), what tally relies on there: a line a check",
		Long: "doctor checks, on --project's --database (or the emulator in FIRESTORE_EMULATOR_HOST):\n" +
			"  functions    Increment answers, and the functions recorded the settings this command has;\n" +
			"  verify       a commit verifying a document it does not write is taken, and refused once it is gone;\n" +
			"  aggregation  sum() answers its read time, and counts what was there at a past one;\n" +
			"  fold         a shard write of a counter of its own reaches Rollup, and is folded within --fold-within;\n" +
			"  rules        the rules in force hold tally's part as this version renders it, and yours;\n" +
			"  roles        tally's service accounts hold no role on the project beyond what deploy.sh grants.\n" +
			"It writes only documents of its own (tally_doctor/..., and a counted document named\n" +
			"tally-doctor-...), and removes them. On the local stack it says which checks it cannot\n" +
			"make. It exits 1 if a check failed.",
		Args: exactArgs(0, "no arguments"),
	}
	s := configFlags(cmd)
	s.clientFlags()
	url := cmd.Flags().String("increment-url", "", "where Increment answers (default: gcloud's tally-increment in --region)")
	region := cmd.Flags().String("region", "", "the region the functions run in (deploy.sh's --region)")
	within := cmd.Flags().Duration("fold-within", 2*time.Minute, "how long the fold check waits for its write to be folded")
	var ro deploy.RulesOptions
	cmd.Flags().BoolVar(&ro.SignedInReads, "signed-in-reads", false, "the rules were deployed with --signed-in-reads")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		return s.connected(func(ctx context.Context, fs *firestore.Client, cfg setup.Config) error {
			tally, err := tallyRules(cfg, ro)
			if err != nil {
				return usageError{err}
			}
			rs := doctor.Run(ctx, doctor.Options{
				Client: fs, Admin: counter.New(fs, counter.Options{Layout: cfg.Layout, DefaultShards: cfg.DefaultShards, Spacing: cfg.Spacing}),
				Layout: layoutOf(cfg), Project: cfg.Project, Database: cfg.Database, Local: os.Getenv(EnvEmulator) != "",
				IncrementURL: *url, Region: *region, FoldWithin: *within, TallyRules: tally,
				Release: deploy.Release{Project: cfg.Project, Database: cfg.Database, Endpoint: os.Getenv(EnvRulesAPI)},
				Out:     cmd.OutOrStdout(),
			})
			if doctor.Failed(rs) {
				return fmt.Errorf("a check failed: see its line above")
			}
			return nil
		})
	}
	return cmd
}
