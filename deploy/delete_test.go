package deploy

import (
	"strings"
	"testing"
)

// TestDeleteUndoesDeploy: for everything a deploy dry run creates (each
// function, Eventarc trigger, scheduler job, log metric, alert policy,
// service account and role binding), the --delete dry run with the same
// flags removes it; and it removes nothing else, and creates nothing.
func TestDeleteUndoesDeploy(t *testing.T) {
	args := []string{"--project", "demo-proj", "--region", "us-central1", "--database-location", "nam5",
		"--counts", "posts:likes;users/*/posts:likes;stats/site:users=count(/users)", "--reconcile-schedule", "--public", "--auth", "firebase", "--votes-only"}
	made := map[string]bool{}
	for _, line := range dryRun(t, args...) {
		if k := resource(line, "deploy", "create", "add-iam-policy-binding", "add-invoker-policy-binding"); k != "" {
			made[k] = true
		}
	}
	removed := map[string]bool{}
	for _, line := range dryRun(t, append(args, "--delete")...) {
		if resource(line, "deploy", "create", "add-iam-policy-binding", "update", "enable") != "" {
			t.Errorf("--delete makes or changes something: %s", line)
		}
		if k := resource(line, "delete", "remove-iam-policy-binding"); k != "" {
			removed[k] = true
		}
	}
	if len(made) < 10 {
		t.Fatalf("the deploy dry run made only %v", made)
	}
	for k := range made {
		if !removed[k] {
			t.Errorf("deploy makes %s, and --delete does not remove it", k)
		}
	}
	for k := range removed {
		if !made[k] {
			t.Errorf("--delete removes %s, which deploy does not make", k)
		}
	}
}

// resource names what a gcloud command line acts on, if its verb is one of
// verbs: its group and the first argument after the verb (for a role
// binding on the project, the member and role too; for one on a topic or
// a service account, and for a function's invoker binding, nothing of its
// own: the resource's removal removes it). Alert policies
// are named by their display name, which their removal looks up.
func resource(line string, verbs ...string) string {
	f := strings.Fields(line)
	if len(f) < 3 || f[0] != "gcloud" {
		return ""
	}
	for i, w := range f {
		for _, v := range verbs {
			if w != v || i+1 >= len(f) {
				continue
			}
			group := strings.Join(f[1:i], " ")
			switch {
			case v == "add-invoker-policy-binding":
				return "functions " + f[i+1]
			case strings.HasSuffix(v, "iam-policy-binding") && group == "projects":
				return "binding " + flagValue(f, "--member") + " " + flagValue(f, "--role")
			case group == "alpha monitoring policies":
				return "alert policy"
			case group == "scheduler jobs" && f[i+1] == "http":
				return group + " " + f[i+2]
			}
			name, _, _ := strings.Cut(f[i+1], "@") // a service account by its name
			return group + " " + name
		}
	}
	return ""
}

func flagValue(f []string, name string) string {
	for _, w := range f {
		if v, ok := strings.CutPrefix(w, name+"="); ok {
			return v
		}
	}
	return ""
}
