package doctor

import (
	"context"
	"fmt"

	"github.com/tallycounters/tally/deploy"
)

// rules checks that the rules in force hold tally's part as this version
// renders it, and the app's besides.
func rules(ctx context.Context, o Options, _ string) (Verdict, string) {
	if o.Local {
		return Skip, "the emulator enforces serve's rules (deploy/firestore.rules, with --rules yours merged in): no release to read"
	}
	live, err := o.Release.Live(ctx)
	if err != nil {
		return Fail, fmt.Sprintf("could not read the rules in force: %v (the Firebase Rules API, with your application default credentials)", err)
	}
	release := deploy.ReleaseName(o.Project, o.Database)
	switch {
	case live == "":
		return Fail, fmt.Sprintf("no rules are in force for %s: deploy.sh publishes them (or tally rules --live --publish)", release)
	case deploy.Replaceable(live):
		if live != o.TallyRules {
			return Fail, fmt.Sprintf("%s holds an earlier tally's rules alone: tally rules --live --publish puts this version's in their place", release)
		}
		return OK, fmt.Sprintf("%s holds tally's rules alone, as this version renders them (no rules of the app's)", release)
	}
	m, err := deploy.MergeRules(live, o.TallyRules)
	if err != nil {
		return Fail, fmt.Sprintf("tally's rules do not merge into those in force for %s: %v", release, err)
	}
	app := deploy.AppPart(live)
	switch {
	case m.Rules != live:
		return Fail, fmt.Sprintf("the rules in force for %s lack tally's part as this version renders it: tally rules --live --diff shows what to change, "+
			"tally rules --live --publish changes it, keeping yours", release)
	case !deploy.HasMatch(app):
		return OK, fmt.Sprintf("%s holds tally's part, as this version renders it, and no match of the app's", release)
	}
	return OK, fmt.Sprintf("%s holds tally's part, as this version renders it, and the app's own matches", release)
}
