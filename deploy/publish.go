package deploy

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"google.golang.org/api/firebaserules/v1"
	"google.golang.org/api/googleapi"
)

// ReleaseName is the Firebase Rules release that serves a Firestore
// database's rules.
func ReleaseName(project, database string) string {
	name := "projects/" + project + "/releases/cloud.firestore"
	if database != "" && database != "(default)" {
		name += "/" + database
	}
	return name
}

// Publish makes source the security rules of the project's database, with
// application default credentials. If the release already serves the same
// source it changes nothing and returns false.
func Publish(ctx context.Context, project, database, source string) (changed bool, err error) {
	svc, err := firebaserules.NewService(ctx)
	if err != nil {
		return false, fmt.Errorf("deploy: rules client: %w", err)
	}
	release := ReleaseName(project, database)
	current, err := svc.Projects.Releases.Get(release).Context(ctx).Do()
	exists := err == nil
	if err != nil && !notFound(err) {
		return false, fmt.Errorf("deploy: read release %s: %w", release, err)
	}
	if exists {
		rs, err := svc.Projects.Rulesets.Get(current.RulesetName).Context(ctx).Do()
		if err == nil && rs.Source != nil && len(rs.Source.Files) == 1 && rs.Source.Files[0].Content == source {
			return false, nil
		}
	}
	rs, err := svc.Projects.Rulesets.Create("projects/"+project, &firebaserules.Ruleset{
		Source: &firebaserules.Source{Files: []*firebaserules.File{{Name: "firestore.rules", Content: source}}},
	}).Context(ctx).Do()
	if err != nil {
		return false, fmt.Errorf("deploy: create ruleset: %w", err)
	}
	r := &firebaserules.Release{Name: release, RulesetName: rs.Name}
	if exists {
		_, err = svc.Projects.Releases.Patch(release, &firebaserules.UpdateReleaseRequest{Release: r}).Context(ctx).Do()
	} else {
		_, err = svc.Projects.Releases.Create("projects/"+project, r).Context(ctx).Do()
	}
	if err != nil {
		return false, fmt.Errorf("deploy: release %s: %w", release, err)
	}
	return true, nil
}

func notFound(err error) bool {
	var ge *googleapi.Error
	return errors.As(err, &ge) && ge.Code == http.StatusNotFound
}
