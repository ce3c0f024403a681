package core

import (
	"cmp"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tallycounters/tally/layout"
)

// TestValidID: any id Firestore takes for a document names a counter, a
// counted document or a child: emails, spaces, ':', '+', '%', accents,
// emoji, 1,500 bytes; what Firestore refuses is refused, saying why.
func TestValidID(t *testing.T) {
	for _, ok := range []string{"likes", "a.b-c_D9", "alice@example.com", "a b", "x:y", "a+b", "100%", "%41", "caf\u00e9",
		"\U0001F600", strings.Repeat("x", 1500), "...", "_x_", "__x", " "} {
		if err := ValidID(ok); err != nil {
			t.Errorf("ValidID(%q) = %v", ok, err)
		}
	}
	for bad, want := range map[string]string{
		"":                        "empty",
		".":                       "reserved",
		"..":                      "reserved",
		"a/b":                     "'/' at byte 1",
		strings.Repeat("x", 1501): "longer than 1500 bytes",
		"__x__":                   "__name__",
		"____":                    "__name__",
		"a\xffb":                  "byte 0xff at byte 1 is not UTF-8",
	} {
		err := ValidID(bad)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ValidID(%q) = %v; want it to say %s", bad, err, want)
		}
	}
}

// TestValidName: a configured collection's name is plain, as it goes
// into rules, trigger patterns and shell commands; the error names a
// character as itself, not as a byte of it.
func TestValidName(t *testing.T) {
	for _, ok := range []string{"counters", "a.b-c_D9", strings.Repeat("x", 128)} {
		if err := ValidName(ok); err != nil {
			t.Errorf("ValidName(%q) = %v", ok, err)
		}
	}
	for bad, want := range map[string]string{
		"a b":                    "character ' ' at byte 1",
		"caf\u00e9":              "character '\u00e9' at byte 3",
		"\u65e5\u672c":           "character '\u65e5' at byte 0",
		strings.Repeat("x", 129): "longer than 128 bytes",
		"a/b":                    "'/'",
	} {
		err := ValidName(bad)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ValidName(%q) = %v; want it to say %s", bad, err, want)
		}
	}
}

// TestUserKey: every uid names one document of its own: '/' and '%' are
// encoded, and so is the first character of a uid that would still not
// be an id. The table is testdata/formats/userkey.json, which the web
// client's tests read too.
func TestUserKey(t *testing.T) {
	b, err := os.ReadFile("../../testdata/formats/userkey.json")
	if err != nil {
		t.Fatal(err)
	}
	var fixture struct{ Keys map[string]string }
	if err := json.Unmarshal(b, &fixture); err != nil || len(fixture.Keys) == 0 {
		t.Fatalf("the fixture: %v", err)
	}
	seen := map[string]string{}
	for uid, want := range fixture.Keys {
		got := UserKey(uid)
		if got != want {
			t.Errorf("UserKey(%q) = %q, want %q", uid, got, want)
		}
		if err := ValidID(got); err != nil {
			t.Errorf("UserKey(%q) = %q: %v", uid, got, err)
		}
		if other, ok := seen[got]; ok {
			t.Errorf("UserKey(%q) = UserKey(%q) = %q", uid, other, got)
		}
		seen[got] = uid
	}
}

func TestParseShardPath(t *testing.T) {
	l := Layout{Collection: "tallies", ShardField: "count"}
	if id, life, n, err := l.ParseShardPath("tallies/likes/shards/12"); err != nil || id != "likes" || life != "" || n != 12 {
		t.Errorf("= %q, %q, %d, %v", id, life, n, err)
	}
	if id, _, _, err := l.ParseShardPath("tallies/alice@example.com/shards/0"); err != nil || id != "alice@example.com" {
		t.Errorf("= %q, %v", id, err)
	}
	for _, bad := range []string{"counters/likes/shards/1", "tallies/likes/shards/01", "tallies/likes/shards/-1", "tallies//shards/1", "tallies/likes",
		"tallies/likes/lives/1732000000000000/shards/1"} {
		if _, _, _, err := l.ParseShardPath(bad); err == nil {
			t.Errorf("ParseShardPath(%q) accepted", bad)
		}
	}
}

func TestParseCounts(t *testing.T) {
	docs, err := ParseCounts(" posts:likes, views ; users/*/posts:likes;")
	if err != nil {
		t.Fatal(err)
	}
	if got := FormatCounts(docs); got != "posts:likes,views;users/*/posts:likes" {
		t.Errorf("FormatCounts = %q", got)
	}
	for _, bad := range []string{
		"posts", "posts:", "posts/p1:likes", "*:likes", "posts:likes;posts:views", "posts:likes,likes",
		"posts:1st", "posts:a.b", "posts:_tally", "posts:__x__", "posts/*/shards:likes", "po sts:likes",
	} {
		if _, err := ParseCounts(bad); err == nil {
			t.Errorf("ParseCounts(%q) accepted", bad)
		}
	}
}

func docsLayout(t *testing.T) Layout {
	t.Helper()
	docs, err := ParseCounts("posts:likes,views;users/*/posts:likes")
	if err != nil {
		t.Fatal(err)
	}
	l := Default()
	l.Docs = docs
	if err := l.Validate(); err != nil {
		t.Fatal(err)
	}
	return l
}

func TestDocsLayout(t *testing.T) {
	l := docsLayout(t)
	for _, c := range []struct {
		name, field string
		want        string // the count's field, or part of the error
	}{
		{"posts/p1", "likes", "likes"},
		{"posts/p1", "views", "views"},
		{"users/u1/posts/p2", "likes", "likes"},
		{"users/u1/posts/p2", "views", `"views" is not counted on users/*/posts; its counts are likes`},
		{"posts/p1", "", "give the field to count on posts/p1: one of likes, views"},
		{"comments/c1", "likes", "counts are declared on posts (likes, views); users/*/posts (likes)"},
		{"posts", "likes", "not a document path"},
		{"posts/p 1", "likes", "likes"},
		{"posts/a@b.c", "likes", "likes"},
		{"posts/a/b", "likes", "not a document path"},
		{"posts/" + strings.Repeat("x", 1501), "likes", "longer than 1500 bytes"},
	} {
		got, err := l.Check(c.name, c.field)
		if err != nil {
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("Check(%q, %q) = %v; want %q", c.name, c.field, err, c.want)
			}
			continue
		}
		if got.Field != c.want || got.Shard != c.want {
			t.Errorf("Check(%q, %q) = %+v; want %q", c.name, c.field, got, c.want)
		}
	}
	if got := l.Counts("posts/p1"); len(got) != 2 || got[1] != (Count{"views", "views"}) {
		t.Errorf("Counts = %+v", got)
	}
	if name, life, n, err := l.ParseShardPath("users/u1/posts/p2/lives/1732000000000000/shards/3"); err != nil || name != "users/u1/posts/p2" || life != "1732000000000000" || n != 3 {
		t.Errorf("ParseShardPath = %q, %q, %d, %v", name, life, n, err)
	}
	for _, bad := range []string{"posts/p1/other/3", "comments/c1/lives/1/shards/3", "posts/p1/lives/1/shards/03", "users/u1/lives/1/shards/1",
		"posts/p1/shards/3", "posts/p1/lives/01/shards/3", "posts/p1/lives/x/shards/3", "posts/p1/other/1/shards/3", "posts/lives/1/shards/3"} {
		if _, _, _, err := l.ParseShardPath(bad); err == nil {
			t.Errorf("ParseShardPath(%q) accepted", bad)
		}
	}
	if got := l.VoterID("likes", "u1"); got != "likes:u1" {
		t.Errorf("VoterID = %q", got)
	}
	if got := l.AsOfPath(); strings.Join(got, ".") != "_tally.as_of" {
		t.Errorf("AsOfPath = %v", got)
	}
}

func TestGuideLayoutCheck(t *testing.T) {
	l := Default()
	if c, err := l.Check("likes", ""); err != nil || c != (Count{"total", "count"}) {
		t.Errorf("Check = %+v, %v", c, err)
	}
	if _, err := l.Check("likes", "views"); err == nil || !strings.Contains(err.Error(), "give its id alone") {
		t.Errorf("Check with a field = %v", err)
	}
	l.ShardsName = "tally_shards"
	if _, _, _, err := l.ParseShardPath("counters/a/shards/1"); err == nil {
		t.Error("ParseShardPath took the default subcollection after it was renamed")
	}
	l.VotersName = "tally_shards"
	if l.Validate() == nil {
		t.Error("Validate took two subcollections of one name")
	}
}

// TestWritten: on documents the window runs from tally's last write, whose
// server timestamp may precede its commit; the update time counts when it
// follows close behind, and never a write of the app's long after.
func TestWritten(t *testing.T) {
	l := docsLayout(t)
	w := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	data := map[string]any{FieldBookkeeping: map[string]any{FieldWritten: w}}
	for _, c := range []struct {
		updated, want time.Time
	}{
		{w.Add(23 * time.Millisecond), w.Add(23 * time.Millisecond)}, // the commit, just after its request
		{w, w},
		{w.Add(time.Minute), w},       // the app wrote long after
		{w.Add(-time.Millisecond), w}, // dated after its commit: keep the later
	} {
		if got := l.Written(data, c.updated); !got.Equal(c.want) {
			t.Errorf("Written(updated %v) = %v, want %v", c.updated.Sub(w), got.Sub(w), c.want.Sub(w))
		}
	}
	if got := l.Written(map[string]any{}, w); !got.IsZero() {
		t.Errorf("Written of a document tally never wrote = %v, want zero", got)
	}
	if got := Default().Written(data, w.Add(time.Hour)); !got.Equal(w.Add(time.Hour)) {
		t.Errorf("guide layout: Written = %v, want the update time", got)
	}
}

// TestTimeZoneIsNamed: TALLY_TIME_ZONE takes a zone of the IANA database,
// never "Local", which each machine that reads the recorded setting would
// take as its own zone.
func TestTimeZoneIsNamed(t *testing.T) {
	for zone, ok := range map[string]bool{"Europe/Paris": true, "UTC": true, "": true, "Local": false, "Mars/Olympus": false} {
		l, err := LayoutFromEnv(func(k string) string {
			if k == layout.EnvTimeZone {
				return zone
			}
			return ""
		})
		if (err == nil) != ok {
			t.Errorf("TALLY_TIME_ZONE=%q: %v; want it taken: %v", zone, err, ok)
		}
		if err == nil && l.Zone.String() != cmp.Or(zone, "UTC") {
			t.Errorf("TALLY_TIME_ZONE=%q read as %s", zone, l.Zone)
		}
	}
}
