package deploy

import (
	"strings"
	"testing"
)

func TestExtensionRulesRender(t *testing.T) {
	src, err := ExtensionRules([]string{"likes", "stats.views", "stats.clicks"}, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"match /{path=**}/_counter_shards_/{shard} {", "allow get: if request.auth != null;",
		"request.resource.data.keys().hasOnly(['likes', 'stats'])",
		"request.resource.data['stats'].keys().hasOnly(['clicks', 'views'])",
	} {
		if !strings.Contains(src, want) {
			t.Errorf("the extension's rules lack %q:\n%s", want, src)
		}
	}
	for _, bad := range [][]string{nil, {"a..b"}, {"a", "a.b"}, {"a.b", "a"}, {"it's"}} {
		if _, err := ExtensionRules(bad, false); err == nil {
			t.Errorf("fields %q were taken", bad)
		}
	}
}
