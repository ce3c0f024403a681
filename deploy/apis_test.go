package deploy

import (
	"strings"
	"testing"
)

// apiOf is the API each kind of gcloud command the dry runs print calls.
var apiOf = map[string]string{
	"gcloud functions ":               "cloudfunctions.googleapis.com",
	"gcloud eventarc ":                "eventarc.googleapis.com",
	"gcloud scheduler ":               "cloudscheduler.googleapis.com",
	"gcloud firestore ":               "firestore.googleapis.com",
	"gcloud logging ":                 "logging.googleapis.com",
	"gcloud alpha monitoring ":        "monitoring.googleapis.com",
	"gcloud iam ":                     "iam.googleapis.com",
	"gcloud projects add-iam-policy-": "cloudresourcemanager.googleapis.com",
	"gcloud pubsub ":                  "pubsub.googleapis.com",
	"gcloud run ":                     "run.googleapis.com",
}

// TestEnablesEveryAPIItUses: every variant's dry run enables, in its one
// "gcloud services enable", every API its later commands call, so that a
// fresh project takes the deploy: the boundary job of counts by time needs
// Cloud Scheduler with no --reconcile-schedule too.
func TestEnablesEveryAPIItUses(t *testing.T) {
	t.Parallel()
	for name, args := range variants {
		if strings.HasPrefix(name, "delete") {
			continue
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			lines := dryRun(t, args...)
			var enabled string
			for _, line := range lines {
				if strings.HasPrefix(line, "gcloud services enable ") {
					enabled = line
					break
				}
			}
			if enabled == "" {
				t.Fatalf("the dry run enables no API:\n%s", strings.Join(lines, "\n"))
			}
			for _, line := range lines {
				for prefix, api := range apiOf {
					if strings.HasPrefix(line, prefix) && !strings.Contains(enabled+" ", " "+api+" ") {
						t.Errorf("%s\nuses %s, which the dry run does not enable:\n%s", line, api, enabled)
					}
				}
			}
		})
	}
}
