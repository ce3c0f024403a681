package extension

import (
	"strings"
	"testing"
)

// TestParseCounters: TALLY_EXTENSION_COUNTERS declares documents and the
// fields their clients count, in TALLY_COUNTS' syntax; "true", the old
// setting, is refused with the new form; no declaration reaches tally's
// own collections or the extension's.
func TestParseCounters(t *testing.T) {
	for _, c := range []struct {
		in, want, err string
	}{
		{"", "", ""},
		{"false", "", ""},
		{"pages:likes,stats.views", "pages:likes,stats.views", ""},
		{" pages : likes ; users/*/posts:likes ", "pages:likes;users/*/posts:likes", ""},
		{"stats/site:visits", "stats/site:visits", ""},
		{"true", "", "pages:likes,stats.views;users/*/posts:likes"},
		{"pages", "", "want collection:field"},
		{"pages:", "", "no fields"},
		{"pages:likes;pages:views", "", "declared twice"},
		{"pages:likes,likes", "", "declared once"},
		{"pages:stats,stats.views", "", "declared once"},
		{"pages:_tally.likes", "", "plain names"},
		{"pages:li-kes", "", "plain names"},
		{"posts/*/lives:likes", "", "tally's or the extension's own"},
		{"posts/*/lives/*/shards:likes", "", "tally's or the extension's own"},
		{"posts/*/lives/*/voters:likes", "", "tally's or the extension's own"},
		{"tally_ranks:likes", "", "tally's or the extension's own"},
		{"posts_limits:likes", "", "tally's or the extension's own"},
		{"pages/*/_counter_shards_:likes", "", "tally's or the extension's own"},
		{"*/x:likes", "", "segment"},
		{"pages/a b:likes", "", "segment"},
	} {
		got, err := ParseCounters(c.in)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("ParseCounters(%q): %v; want an error saying %q", c.in, err, c.err)
		case c.err == "" && err != nil:
			t.Errorf("ParseCounters(%q): %v", c.in, err)
		case c.err == "" && got.String() != c.want:
			t.Errorf("ParseCounters(%q) = %q; want %q", c.in, got, c.want)
		}
	}
}

// TestCountersHold: a shard is moved only into a document a declaration
// holds: a document of the collection, any id where '*' stands, or the
// one document declared; never a document below one, nor one at another
// depth.
func TestCountersHold(t *testing.T) {
	cs, err := ParseCounters("pages:likes;users/*/posts:likes;stats/site:visits")
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]bool{
		"pages/home":                      true,
		"users/u1/posts/p1":               true,
		"stats/site":                      true,
		"stats/other":                     false,
		"admins/mallory":                  false,
		"pages":                           false,
		"pages/home/comments/evil":        false,
		"pages/home/lives/1/voters/likes": false,
		"users/u1":                        false,
		"users/u1/posts/p1/comments/c":    false,
	} {
		if _, got := cs.Of(path); got != want {
			t.Errorf("Of(%q) holds: %t; want %t", path, got, want)
		}
	}
	for id, want := range map[string]bool{
		"0b7c0a2e-5d4f-4c8e-9a61-2f0c9a61b7c0": true, "try-it": true, "client_1": true,
		"\t0b7c": false, "\t\n": false, "a\n": false, "": false, "a.b": false, "a b": false,
	} {
		if got := ShardID.MatchString(id); got != want {
			t.Errorf("ShardID %q: %t; want %t", id, got, want)
		}
	}
}
