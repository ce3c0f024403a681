package deploy

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"cloud.google.com/go/firestore"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/extension"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
)

// TestExtensionRules runs the extension's clients' rules in the
// emulator, in tally's, merged into an app's as 'tally rules
// --extension-counters pages:likes,stats.views --merge firestore.rules'
// does: a client creates and increments its own shard's counters, nested
// ones too, under a declared document, and reads it and the partials; it
// writes no partial (whatever follows the tab: a newline too), no other
// field, no string, no fraction, no NaN, no number past 2^53, no shard
// of a document no declaration holds (another collection's, a document
// below a declared one, tally's own, one at the root), and deletes and
// lists nothing under _counter_shards_; the app's own rules hold as they
// were. (With TALLY_COUNTS, clients/web TestExtensionClients writes
// through them.)
func TestExtensionRules(t *testing.T) {
	t.Parallel()
	emulatortest.Require(t)
	src, err := Rules(RulesOptions{Collection: core.Default().Collection})
	if err != nil {
		t.Fatal(err)
	}
	counters, err := extension.ParseCounters("pages:likes,stats.views;posts:likes")
	if err != nil {
		t.Fatal(err)
	}
	ext, err := ExtensionRules(counters, false)
	if err != nil {
		t.Fatal(err)
	}
	if src, err = WithExtension(src, ext); err != nil {
		t.Fatal(err)
	}
	m, err := MergeRules(appRules, src)
	if err != nil {
		t.Fatal(err)
	}
	base := rulesEmulator(t, m.Rules)
	anon, alice := rest{t, base, ""}, rest{t, base, userToken(rulesProject, "alice")}
	if code := alice.do("PATCH", "profiles/alice", `{"fields":{"name":{"stringValue":"Alice"}}}`); code != http.StatusOK {
		t.Errorf("alice's write of her profile, by the app's rules: %d, want 200", code)
	}
	if code := anon.do("PATCH", "profiles/alice", `{"fields":{"name":{"stringValue":"not hers"}}}`); code != http.StatusForbidden {
		t.Errorf("an anonymous write of alice's profile: %d, want 403", code)
	}
	shard := "pages/home/_counter_shards_/2f0c9a61-5d4f-4c8e-9a61-2f0c9a61b7c0"
	one := `{"fields":{"likes":{"integerValue":"1"}}}`
	for _, c := range []struct {
		what, method, path, body string
		want                     int
	}{
		{"a new shard", "PATCH", shard, `{"fields":{"likes":{"integerValue":"1"}}}`, http.StatusOK},
		{"an increment of it", "PATCH", shard, `{"fields":{"likes":{"integerValue":"2"},"stats":{"mapValue":{"fields":{"views":{"integerValue":"1"}}}}}}`, http.StatusOK},
		{"a read of it", "GET", shard, "", http.StatusOK},
		{"a shard of a counted post", "PATCH", "posts/p1/_counter_shards_/c2", one, http.StatusOK},
		{"a fraction", "PATCH", "posts/p1/_counter_shards_/c2", `{"fields":{"likes":{"doubleValue":1.5}}}`, http.StatusForbidden},
		{"past 2^53", "PATCH", shard, `{"fields":{"likes":{"integerValue":"9007199254740993"}}}`, http.StatusForbidden},
		{"a field declared on another collection", "PATCH", "posts/p1/_counter_shards_/c2", `{"fields":{"stats":{"mapValue":{"fields":{"views":{"integerValue":"1"}}}}}}`, http.StatusForbidden},
		{"a document of no declaration", "PATCH", "admins/mallory/_counter_shards_/c1", one, http.StatusForbidden},
		{"a document below a declared one", "PATCH", "posts/p1/comments/evil/_counter_shards_/c1", one, http.StatusForbidden},
		{"a voter record of tally's", "PATCH", "posts/p1/lives/1/voters/likes:u1/_counter_shards_/c1", one, http.StatusForbidden},
		{"a shard of tally's", "PATCH", "posts/p1/lives/1/shards/0/_counter_shards_/c1", one, http.StatusForbidden},
		{"a board of tally's", "PATCH", "tally_ranks/b/_counter_shards_/c1", one, http.StatusForbidden},
		{"a shard at the root", "PATCH", "_counter_shards_/c1", one, http.StatusForbidden},
		{"a shard id of other characters", "PATCH", "pages/home/_counter_shards_/a.b", one, http.StatusForbidden},
		{"a field of no counter", "PATCH", shard, `{"fields":{"likes":{"integerValue":"2"},"owner":{"stringValue":"x"}}}`, http.StatusForbidden},
		{"a string", "PATCH", shard, `{"fields":{"likes":{"stringValue":"9"}}}`, http.StatusForbidden},
		{"NaN", "PATCH", shard, `{"fields":{"likes":{"doubleValue":"NaN"}}}`, http.StatusForbidden},
		{"a nested field of no counter", "PATCH", shard, `{"fields":{"stats":{"mapValue":{"fields":{"clicks":{"integerValue":"1"}}}}}}`, http.StatusForbidden},
		{"a number for a map", "PATCH", shard, `{"fields":{"stats":{"integerValue":"1"}}}`, http.StatusForbidden},
		{"a delete", "DELETE", shard, "", http.StatusForbidden},
		{"a listing", "GET", "pages/home/_counter_shards_", "", http.StatusForbidden},
	} {
		if code := anon.do(c.method, c.path, c.body); code != c.want {
			t.Errorf("%s (%s %s): %d, want %d", c.what, c.method, c.path, code, c.want)
		}
	}
	// A partial's id begins with a tab, which the emulator's REST paths
	// trim: a client of the SDKs' protocol writes it.
	client := anonymous(t, strings.TrimSuffix(strings.TrimPrefix(base, "http://"), "/v1/projects/"+rulesProject+"/databases/(default)/documents/"))
	ctx := context.Background()
	partials := client.Collection("posts/p1/_counter_shards_")
	if _, err := partials.Doc("2f0c-client").Set(ctx, map[string]any{"likes": firestore.Increment(1)}, firestore.MergeAll); err != nil {
		t.Errorf("a client's shard over gRPC: %v", err)
	}
	for _, id := range []string{"\t2f0c", "\t\t\t\t2", "\t\n", "\n"} {
		if _, err := partials.Doc(id).Set(ctx, map[string]any{"likes": firestore.Increment(1)}, firestore.MergeAll); status.Code(err) != codes.PermissionDenied {
			t.Errorf("a client's write of the partial %q: %v; want PERMISSION_DENIED", id, err)
		}
	}
}

// anonymous is a client of the emulator at host with no credentials, as
// a client that is not signed in: the rules bind it.
func anonymous(t *testing.T, host string) *firestore.Client {
	t.Helper()
	conn, err := grpc.NewClient(host, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	c, err := firestore.NewClient(context.Background(), rulesProject, option.WithGRPCConn(conn))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
