package doctor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"

	"github.com/tallycounters/tally/counter"
	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/layout"
)

// functions checks that Increment answers (a GET of no rank, which it
// refuses with its own JSON error, writing nothing) and that the
// functions recorded their settings, as this command's.
func functions(ctx context.Context, o Options, _ string) (Verdict, string) {
	url := o.IncrementURL
	if url == "" {
		if o.Local {
			return Skip, "Increment's address is serve's: give --increment-url (serve prints it)"
		}
		var err error
		if url, err = o.gcloud(ctx, "functions", "describe", "tally-increment", "--gen2", "--region="+o.Region,
			"--project="+o.Project, "--format=value(url)"); err != nil || url == "" {
			return Fail, fmt.Sprintf("no tally-increment in %s (%v): deploy it (deploy.sh), or give --region where it runs, or --increment-url", o.Region, err)
		}
	}
	answer, err := o.ask(ctx, url)
	if err != nil {
		return Fail, fmt.Sprintf("Increment at %s does not answer as tally does: %v", url, err)
	}
	d, err := counter.Declared(ctx, o.Client)
	if errors.Is(err, counter.ErrNotDeclared) {
		return Fail, fmt.Sprintf("Increment answers at %s (%s), but no function recorded its settings on this database: do they run on --database %s?", url, answer, o.Database)
	}
	if err != nil {
		return Fail, err.Error()
	}
	if theirs, ours := d.Env[layout.EnvCounts], core.FormatCounts(o.Layout.Docs); theirs != ours {
		return Fail, fmt.Sprintf("the functions count %s=%q, this command %q: give it their settings (or none, and it reads theirs)", layout.EnvCounts, theirs, ours)
	}
	var set []string
	for _, k := range counter.DeclaredVars {
		if v := d.Env[k]; v != "" {
			set = append(set, k+"="+v)
		}
	}
	return OK, fmt.Sprintf("Increment answers at %s (%s); the functions (%s) record %s", url, answer, d.By, strings.Join(set, " "))
}

// ask sends Increment a GET of no rank: tally answers 400 (or 401 where
// App Check or sign-in is on) with its JSON error. A private deployment
// is asked with the caller's identity token.
func (o Options) ask(ctx context.Context, url string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"?rank=", nil)
	if err != nil {
		return "", err
	}
	if !o.Local {
		if tok, err := o.gcloud(ctx, "auth", "print-identity-token"); err == nil {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	var e struct{ Error string }
	if json.Unmarshal(b, &e) != nil || e.Error == "" {
		return "", fmt.Errorf("%s, %q", resp.Status, strings.TrimSpace(string(b[:min(len(b), 200)])))
	}
	return fmt.Sprintf("%d: %s", resp.StatusCode, e.Error), nil
}

// gcloud runs the gcloud command with args, and answers what it printed.
func (o Options) gcloud(ctx context.Context, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, o.Gcloud, args...).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return "", fmt.Errorf("%s %s: %v: %s", o.Gcloud, args[0], err, strings.TrimSpace(string(ee.Stderr)))
		}
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}
