package doctor

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/firestore"
	"cloud.google.com/go/firestore/apiv1/firestorepb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tallycounters/tally/counter"
	"github.com/tallycounters/tally/deploy"
	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/fsrpc"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/testkit/layouttest"
	"github.com/tallycounters/tally/internal/testkit/rulesapi"
	"github.com/tallycounters/tally/internal/tools/stack"
	"github.com/tallycounters/tally/setup"
)

// TestDoctorOnTheLocalStack: tally doctor against serve's stack, the
// guide's counters and counts on documents: the functions answer and
// recorded their settings, the verify, the aggregation and the fold hold;
// the rules and the roles are said to be none of the stack's to check.
// Nothing of the checks' own is left.
func TestDoctorOnTheLocalStack(t *testing.T) {
	paths := emulatortest.RequirePaths(t)
	t.Parallel()
	for name, counts := range map[string]string{"the guide's counters": "", "counts on documents": "posts:likes,views"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cfg, err := setup.ConfigFromEnv(func(k string) string { return map[string]string{setup.EnvCounts: counts}[k] })
			if err != nil {
				t.Fatal(err)
			}
			cfg.Project = emulatortest.Project
			s, err := stack.Start(context.Background(), stack.Options{Config: cfg, Emulator: paths})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				s.Stop(ctx)
			})
			fs := emulatortest.ClientAt(t, s.EmulatorHost, emulatortest.Project)
			var out bytes.Buffer
			rs := Run(context.Background(), Options{Client: fs, Admin: counter.New(fs, counter.Options{Layout: cfg.Layout}),
				Layout: core.MustParse(cfg.Layout), Project: cfg.Project, Database: cfg.Database, Local: true,
				IncrementURL: s.FunctionsURL + "/Increment", Out: &out})
			t.Logf("tally doctor:\n%s", out.String())
			want := map[string]Verdict{"functions": OK, "verify": OK, "aggregation": OK, "fold": OK, "rules": Skip, "roles": Skip}
			for _, r := range rs {
				if r.Verdict != want[r.Check] {
					t.Errorf("%s: %s %s; want %s", r.Check, r.Verdict, r.Says, want[r.Check])
				}
			}
			if Failed(rs) {
				t.Error("a check failed")
			}
			if left, err := fs.Collection(Collection).DocumentRefs(context.Background()).GetAll(); err != nil || len(left) != 0 {
				t.Errorf("the checks left %d documents of their own (%v)", len(left), err)
			}
		})
	}
}

// TestDoctorSaysWhatFails: each check, made to fail, says so and what to
// do: Increment not answering; Firestore refusing a commit's verify; an
// aggregation refused; no Rollup folding the write (none runs); the rules
// in force without tally's part; a role of tally's service accounts
// beyond deploy.sh's. And each passes where it holds.
func TestDoctorSaysWhatFails(t *testing.T) {
	emulatortest.Require(t)
	t.Parallel()
	ctx := context.Background()
	fs := emulatortest.ClientAt(t, emulatortest.Host(), emulatortest.Project) // not the variable: the stacks beside move it
	l := core.Default()
	o := Options{Client: fs, Admin: counter.New(fs, counter.Options{Layout: layouttest.Public(l)}), Layout: l,
		Project: "demo-proj", Database: "(default)", Gcloud: "gcloud", FoldWithin: time.Second}

	dead, _ := net.Listen("tcp", "127.0.0.1:0")
	dead.Close()
	bad := o
	bad.IncrementURL = "http://" + dead.Addr().String() + "/Increment"
	wantFail(t, "functions", bad, functions, "does not answer")

	refusing, err := fsrpc.EmulatorClient(ctx, emulatortest.Host(), emulatortest.Project, firestore.DefaultDatabaseID,
		[]grpc.DialOption{grpc.WithChainUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
			if fsrpc.Verified(ctx) != "" {
				return status.Error(codes.InvalidArgument, "a verify is no write this database takes")
			}
			return invoker(ctx, method, req, reply, cc, opts...)
		})}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer refusing.Close()
	bad = o
	bad.Client = refusing
	wantFail(t, "verify", bad, verify, "was refused")
	wantOK(t, "verify", o, verify)

	bad = o
	bad.Client = emulatortest.Refusing(t, func(*firestorepb.StructuredQuery) error {
		return status.Error(codes.FailedPrecondition, "the query requires an index")
	})
	wantFail(t, "aggregation", bad, aggregation, "requires an index")
	wantOK(t, "aggregation", o, aggregation)

	wantFail(t, "fold", o, fold, "is Rollup deployed") // no Rollup runs on this emulator

	api := rulesapi.New(t)
	o.Release = deploy.Release{Project: "demo-proj", Database: "(default)", Endpoint: api.URL}
	o.TallyRules, _ = deploy.Rules(deploy.RulesOptions{})
	app := "rules_version = '2';\nservice cloud.firestore {\n  match /databases/{database}/documents {\n    match /profiles/{uid} {\n      allow read: if true;\n    }\n  }\n}\n"
	api.Put(deploy.ReleaseName("demo-proj", "(default)"), app)
	wantFail(t, "rules", o, rules, "lack tally's part")
	merged, err := deploy.MergeRules(app, o.TallyRules)
	if err != nil {
		t.Fatal(err)
	}
	api.Put(deploy.ReleaseName("demo-proj", "(default)"), merged.Rules)
	wantOK(t, "rules", o, rules)

	o.Gcloud = fakeGcloud(t, `{"bindings":[{"role":"roles/datastore.user","members":["serviceAccount:tally-runtime@demo-proj.iam.gserviceaccount.com"]},`+
		`{"role":"roles/owner","members":["user:me@example.com","serviceAccount:tally-rollup@demo-proj.iam.gserviceaccount.com"]}]}`)
	wantFail(t, "roles", o, roles, "tally-rollup roles/owner")
	o.Gcloud = fakeGcloud(t, `{"bindings":[{"role":"roles/datastore.user","members":["serviceAccount:tally-runtime@demo-proj.iam.gserviceaccount.com"]},`+
		`{"role":"roles/eventarc.eventReceiver","members":["serviceAccount:tally-trigger@demo-proj.iam.gserviceaccount.com"]},`+
		`{"role":"roles/owner","members":["user:me@example.com"]}]}`)
	wantOK(t, "roles", o, roles)
}

func wantFail(t *testing.T, name string, o Options, c func(context.Context, Options, string) (Verdict, string), says string) {
	t.Helper()
	if v, s := c(context.Background(), o, runID()); v != Fail || !strings.Contains(s, says) {
		t.Errorf("%s, made to fail: %s %s; want FAIL saying %q", name, v, s, says)
	}
}

func wantOK(t *testing.T, name string, o Options, c func(context.Context, Options, string) (Verdict, string)) {
	t.Helper()
	if v, s := c(context.Background(), o, runID()); v != OK {
		t.Errorf("%s: %s %s; want ok", name, v, s)
	}
}

// fakeGcloud stands in for gcloud's projects get-iam-policy, printing
// policy: the project's IAM, as Google answers it.
func fakeGcloud(t *testing.T, policy string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "gcloud")
	if err := os.WriteFile(p, []byte("#!/bin/sh\ncat <<'EOF'\n"+policy+"\nEOF\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}
