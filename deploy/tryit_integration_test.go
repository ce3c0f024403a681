package deploy

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/tools/authemu"
)

// TestTryItTakesTheDeploy: the "Try it" lines deploy.sh prints fit the
// deploy they follow, and paste as printed, in a dry run too. For a public deploy that takes signed-in users,
// they sign a user in for an ID token first (run here, as printed, against
// the Auth emulator in place of identitytoolkit.googleapis.com) and send
// it; for a private one, a gcloud identity token; for an open one, none.
// tally doctor follows them, to check the project.
func TestTryItTakesTheDeploy(t *testing.T) {
	t.Parallel()
	try := func(args ...string) []string {
		var out []string
		t.Helper()
		b, err := exec.Command("bash", append([]string{"deploy.sh", "--dry-run"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("deploy.sh --dry-run %s: %v\n%s", strings.Join(args, " "), err, b)
		}
		_, after, found := strings.Cut(string(b), "# Once deployed")
		if !found {
			t.Fatalf("deploy.sh --dry-run %s prints no try-it lines:\n%s", strings.Join(args, " "), b)
		}
		after, check, found := strings.Cut(after, "# Then check")
		if !found || !strings.Contains(check, "\ngo run ./cmd/tally doctor --project=") {
			t.Fatalf("deploy.sh --dry-run %s prints no tally doctor line after its try-it lines:\n%s", strings.Join(args, " "), b)
		}
		for i, a := range args { // the doctor checks the configuration deployed
			if (a == "--counts" || a == "--extension-counters") && !strings.Contains(check, a+"=") {
				t.Errorf("deploy.sh --dry-run %s prints a tally doctor line without its %s %s:\n%s", strings.Join(args, " "), a, args[i+1], check)
			}
		}
		for _, line := range strings.Split(after, "\n")[1:] {
			if line != "" && !strings.HasPrefix(line, "#") {
				out = append(out, line) // pasted as printed
			}
		}
		return out
	}
	signedIn := try(variants["counts on documents"]...)
	if len(signedIn) != 2 || !strings.HasPrefix(signedIn[0], "TOKEN=$(curl") || !strings.Contains(signedIn[1], `-H "Authorization: Bearer $TOKEN"`) ||
		!strings.Contains(signedIn[1], `-d '{"counter":"posts/POSTS_ID","field":"likes","vote":true}'`) {
		t.Fatalf("a public deploy for signed-in users voting on posts' likes prints:\n%s\nwant a token, then a vote on a post's likes sent with it", strings.Join(signedIn, "\n"))
	}
	if nested := try("--project", "demo-proj", "--region", "us-central1", "--database-location", "nam5", "--counts", "stats/site:users=count(/users);users/*/posts:score=sum(x.n),likes"); len(nested) != 1 ||
		!strings.Contains(nested[0], `-d '{"counter":"users/USERS_ID/posts/POSTS_ID","field":"likes"}'`) {
		t.Errorf("a deploy whose first plain count is on users/*/posts prints:\n%s\nwant an increment of a post's likes there", strings.Join(nested, "\n"))
	}
	if only := try("--project", "demo-proj", "--region", "us-central1", "--database-location", "nam5", "--counts", "stats/site:users=count(/users)"); len(only) != 0 {
		t.Errorf("a deploy of aggregates only prints:\n%s\nwant no increment: its counts move with the app's writes", strings.Join(only, "\n"))
	}
	if open := try(variants["public, scheduled"]...); len(open) != 1 || strings.Contains(open[0], "Authorization") {
		t.Errorf("an open public deploy prints:\n%s\nwant one curl with no token", strings.Join(open, "\n"))
	}
	if private := try(variants["private, named database"]...); len(private) != 1 || !strings.Contains(private[0], "gcloud auth print-identity-token") {
		t.Errorf("a private deploy prints:\n%s\nwant one curl with a gcloud identity token", strings.Join(private, "\n"))
	}

	emulatortest.Without(t, "npm")
	host, err := authemu.Shared("demo-tally")
	if err != nil {
		t.Fatal(err)
	}
	// The printed line signs in as you@example.com; an earlier run of this
	// test against the package's one Auth emulator may have made the user.
	if _, err := authemu.SignUp(host, "you@example.com", "YOUR_PASSWORD"); err != nil && !strings.Contains(err.Error(), "EMAIL_EXISTS") {
		t.Fatal(err)
	}
	line := strings.Replace(signedIn[0], "https://identitytoolkit.googleapis.com/", "http://"+host+"/identitytoolkit.googleapis.com/", 1)
	out, err := exec.Command("bash", "-c", line+`; printf %s "$TOKEN"`).CombinedOutput()
	if token := strings.TrimSpace(string(out)); err != nil || strings.Count(token, ".") != 2 {
		t.Errorf("the printed sign-in, run:\n%s\ngave %q (%v); want an ID token", line, out, err)
	}
}
