package layout

import (
	"strings"
	"testing"
)

func TestValidID(t *testing.T) {
	for _, ok := range []string{"likes", "a.b-c_D9", strings.Repeat("x", 128), "..."} {
		if err := ValidID(ok); err != nil {
			t.Errorf("ValidID(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", ".", "..", "a/b", "a b", "café", strings.Repeat("x", 129), "__x__"} {
		if ValidID(bad) == nil {
			t.Errorf("ValidID(%q) accepted", bad)
		}
	}
}

func TestParseShardPath(t *testing.T) {
	l := Layout{Collection: "tallies", ShardField: "count"}
	if id, n, err := l.ParseShardPath("tallies/likes/shards/12"); err != nil || id != "likes" || n != 12 {
		t.Errorf("= %q, %d, %v", id, n, err)
	}
	for _, bad := range []string{"counters/likes/shards/1", "tallies/likes/shards/01", "tallies/likes/shards/-1", "tallies//shards/1", "tallies/likes"} {
		if _, _, err := l.ParseShardPath(bad); err == nil {
			t.Errorf("ParseShardPath(%q) accepted", bad)
		}
	}
}

// TestValidIDNamesCharacters: the error names a non-ASCII character as
// itself, not as the first byte of its UTF-8 encoding.
func TestValidIDNamesCharacters(t *testing.T) {
	for id, want := range map[string]string{
		"caf\u00e9":    "character '\u00e9' at byte 3",
		"a\xffb":       "byte 0xff at byte 1",
		"a b":          "character ' ' at byte 1",
		"\u65e5\u672c": "character '\u65e5' at byte 0",
	} {
		err := ValidID(id)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ValidID(%q) = %v; want it to say %s", id, err, want)
		}
	}
}
