package deploy

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"google.golang.org/api/firebaserules/v1"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"
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

// A Release is the security rules in force for a project's Firestore
// database, read and published through the Firebase Rules API, with
// application default credentials. Endpoint, if set, is another server
// of that API (a stand-in, for tests), called with no credentials.
type Release struct {
	Project, Database string
	Endpoint          string
}

func (r Release) service(ctx context.Context) (*firebaserules.Service, error) {
	var opts []option.ClientOption
	if r.Endpoint != "" {
		opts = append(opts, option.WithEndpoint(r.Endpoint), option.WithoutAuthentication())
	}
	svc, err := firebaserules.NewService(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("deploy: rules client: %w", err)
	}
	return svc, nil
}

// Live is the source of the rules in force, "" if none are.
func (r Release) Live(ctx context.Context) (string, error) {
	svc, err := r.service(ctx)
	if err != nil {
		return "", err
	}
	name := ReleaseName(r.Project, r.Database)
	rel, err := svc.Projects.Releases.Get(name).Context(ctx).Do()
	if notFound(err) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("deploy: read release %s: %w", name, err)
	}
	rs, err := svc.Projects.Rulesets.Get(rel.RulesetName).Context(ctx).Do()
	if err != nil {
		return "", fmt.Errorf("deploy: read ruleset %s: %w", rel.RulesetName, err)
	}
	if rs.Source == nil || len(rs.Source.Files) != 1 {
		return "", fmt.Errorf("deploy: the rules in force (%s) are not one file: merge into your rules file instead", rel.RulesetName)
	}
	return rs.Source.Files[0].Content, nil
}

// Publish makes source the rules in force. If they are source already it
// changes nothing and returns false. It replaces what is in force: its
// callers publish what they merged into it (MergeRules), or tally's own
// rules where none, or only tally's, were in force (Replaceable).
func (r Release) Publish(ctx context.Context, source string) (changed bool, err error) {
	svc, err := r.service(ctx)
	if err != nil {
		return false, err
	}
	release := ReleaseName(r.Project, r.Database)
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
	rs, err := svc.Projects.Rulesets.Create("projects/"+r.Project, &firebaserules.Ruleset{
		Source: &firebaserules.Source{Files: []*firebaserules.File{{Name: "firestore.rules", Content: source}}},
	}).Context(ctx).Do()
	if err != nil {
		return false, fmt.Errorf("deploy: create ruleset: %w", err)
	}
	rel := &firebaserules.Release{Name: release, RulesetName: rs.Name}
	if exists {
		_, err = svc.Projects.Releases.Patch(release, &firebaserules.UpdateReleaseRequest{Release: rel}).Context(ctx).Do()
	} else {
		_, err = svc.Projects.Releases.Create("projects/"+r.Project, rel).Context(ctx).Do()
	}
	if err != nil {
		return false, fmt.Errorf("deploy: release %s: %w", release, err)
	}
	return true, nil
}

// Replaceable reports whether the rules in force, live, may be replaced
// by tally's own: there are none, or they are tally's rules alone, as an
// earlier tally published them (its header, and no rule of anyone else's
// merged in). Any others are the app's, and tally only merges into them.
func Replaceable(live string) bool {
	return strings.TrimSpace(live) == "" || strings.Contains(live, tallyHeader) && !strings.Contains(live, mergeBegin)
}

// tallyHeader begins the comment at the head of firestore.rules, tally's
// rules alone.
const tallyHeader = "// tally's security rules."

func notFound(err error) bool {
	var ge *googleapi.Error
	return errors.As(err, &ge) && ge.Code == http.StatusNotFound
}
