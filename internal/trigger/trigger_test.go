package trigger

import (
	"slices"
	"testing"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/extension"
)

func TestPatterns(t *testing.T) {
	docs, err := core.ParseCounts("posts:likes,comments=count(comments);users/*/posts:likes;products:rating=avg(reviews.stars);stats/site:users=count(/users)")
	if err != nil {
		t.Fatal(err)
	}
	guide := core.Default()
	renamed := core.Default()
	renamed.ShardsName = "tally_shards"
	for _, c := range []struct {
		name             string
		layout           core.Layout
		written, created []string
	}{
		{"the guide's counters", guide, []string{"counters/{counterId}/shards/{shardId}"}, nil},
		{"shards renamed", renamed, []string{"counters/{counterId}/tally_shards/{shardId}"}, nil},
		{"counts and aggregates on documents", core.Layout{Docs: docs}, []string{
			"posts/{doc0}/lives/{life}/shards/{shardId}", "users/{doc0}/posts/{doc1}/lives/{life}/shards/{shardId}",
			"posts/{doc0}/comments/{child}", "products/{doc0}/reviews/{child}", "users/{child}",
		}, []string{"posts/{doc0}", "users/{doc0}/posts/{doc1}", "products/{doc0}", "stats/site"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := WrittenPatterns(c.layout); !slices.Equal(got, c.written) {
				t.Errorf("WrittenPatterns = %q, want %q", got, c.written)
			}
			if got := CreatedPatterns(c.layout); !slices.Equal(got, c.created) {
				t.Errorf("CreatedPatterns = %q, want %q", got, c.created)
			}
			all := Of(c.layout, nil)
			if len(all) != len(c.written)+len(c.created) {
				t.Fatalf("Of = %+v", all)
			}
			for i, tr := range all {
				want := Trigger{Written, ""}
				if i < len(c.written) {
					want.Pattern = c.written[i]
				} else {
					want = Trigger{Created, c.created[i-len(c.written)]}
				}
				if tr != want {
					t.Errorf("Of[%d] = %+v, want %+v", i, tr, want)
				}
			}
		})
	}
}

// TestDeletedPatterns: a ranked collection's deletions are Rollup's, last;
// other collections' are not.
func TestDeletedPatterns(t *testing.T) {
	docs, err := core.ParseCounts("posts:likes,rank(likes);users:likes")
	if err != nil {
		t.Fatal(err)
	}
	l := core.Layout{Docs: docs}
	if got := DeletedPatterns(l); !slices.Equal(got, []string{"posts/{doc0}"}) {
		t.Errorf("DeletedPatterns = %q", got)
	}
	if all := Of(l, nil); all[len(all)-1] != (Trigger{Deleted, "posts/{doc0}"}) {
		t.Errorf("Of = %+v, want the deletion of posts last", all)
	}
}

// TestExtensionTriggers: with the extension's counters taken over, the
// creation and update of the shards under each declared document are
// Rollup's too, last, and their deletion is not; no other document's
// shards trigger it.
func TestExtensionTriggers(t *testing.T) {
	ext, err := extension.ParseCounters("pages:likes,stats.views;users/*/posts:likes;stats/site:visits")
	if err != nil {
		t.Fatal(err)
	}
	all := Of(core.Default(), ext)
	want := []Trigger{
		{Created, "pages/{doc0}/_counter_shards_/{shard}"}, {Updated, "pages/{doc0}/_counter_shards_/{shard}"},
		{Created, "users/{doc0}/posts/{doc1}/_counter_shards_/{shard}"}, {Updated, "users/{doc0}/posts/{doc1}/_counter_shards_/{shard}"},
		{Created, "stats/site/_counter_shards_/{shard}"}, {Updated, "stats/site/_counter_shards_/{shard}"},
	}
	if len(all) != 7 || !slices.Equal(all[1:], want) {
		t.Errorf("Of = %+v; want the guide's shards, then %+v", all, want)
	}
}
