package doctor

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// granted are the roles deploy.sh grants tally's service accounts on the
// project; the others' (tally-scheduler, tally-parts) are on one resource
// each, none on the project.
var granted = map[string][]string{
	"tally-runtime": {"roles/datastore.user"},
	"tally-trigger": {"roles/eventarc.eventReceiver"},
}

// roles checks that tally's service accounts hold no role on the project
// beyond those deploy.sh grants them.
func roles(ctx context.Context, o Options, _ string) (Verdict, string) {
	if o.Local {
		return Skip, "no project's IAM on the local stack"
	}
	out, err := o.gcloud(ctx, "projects", "get-iam-policy", o.Project, "--format=json")
	if err != nil {
		return Fail, fmt.Sprintf("could not read the project's IAM policy: %v", err)
	}
	var policy struct {
		Bindings []struct {
			Role    string
			Members []string
		}
	}
	if err := json.Unmarshal([]byte(out), &policy); err != nil {
		return Fail, fmt.Sprintf("the project's IAM policy: %v", err)
	}
	suffix := "@" + o.Project + ".iam.gserviceaccount.com"
	var extra, held []string
	for _, b := range policy.Bindings {
		for _, m := range b.Members {
			sa, ok := strings.CutPrefix(m, "serviceAccount:")
			name, ours := strings.CutSuffix(sa, suffix)
			if !ok || !ours || !strings.HasPrefix(name, "tally-") {
				continue
			}
			if slices.Contains(granted[name], b.Role) {
				held = append(held, name+" "+b.Role)
			} else {
				extra = append(extra, name+" "+b.Role)
			}
		}
	}
	if len(extra) > 0 {
		return Fail, fmt.Sprintf("tally's service accounts hold roles deploy.sh does not grant them: %s; remove them "+
			"(gcloud projects remove-iam-policy-binding)", strings.Join(extra, ", "))
	}
	if len(held) == 0 {
		return Fail, "tally's service accounts hold none of their roles on the project: deploy.sh grants them"
	}
	return OK, fmt.Sprintf("tally's service accounts hold what deploy.sh grants them, and no more: %s", strings.Join(held, ", "))
}
