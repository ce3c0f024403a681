package deploy

import (
	"strings"
	"testing"

	"github.com/tallycounters/tally/internal/extension"
)

func TestExtensionRulesRender(t *testing.T) {
	ext, err := extension.ParseCounters("pages:likes,stats.views,stats.clicks;users/*/posts:likes;stats/site:visits")
	if err != nil {
		t.Fatal(err)
	}
	src, err := ExtensionRules(ext, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"match /pages/{doc0}/_counter_shards_/{shard} {", "allow get: if request.auth != null;",
		"match /users/{doc0}/posts/{doc1}/_counter_shards_/{shard} {",
		"match /stats/site/_counter_shards_/{shard} {",
		"shard.matches('^[A-Za-z0-9_-]{1,128}$')",
		"request.resource.data.keys().hasOnly(['likes', 'stats'])",
		"request.resource.data['stats'].keys().hasOnly(['clicks', 'views'])",
		"request.resource.data['likes'] is int && request.resource.data['likes'] <= 9007199254740991",
	} {
		if !strings.Contains(src, want) {
			t.Errorf("the extension's rules lack %q:\n%s", want, src)
		}
	}
	if strings.Contains(src, "**") {
		t.Errorf("the extension's rules match a path of any depth:\n%s", src)
	}
	if _, err := ExtensionRules(nil, false); err == nil {
		t.Error("rules of no counters were rendered")
	}
}
