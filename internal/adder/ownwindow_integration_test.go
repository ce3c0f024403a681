package adder

import (
	"context"
	"testing"
	"time"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/fold"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
)

// TestWindowOverACountWithAnOwnPart: a per-minute window declared on a
// count whose document holds an own part (increments written into it
// while it had no window) counts what was committed since its bucket
// began, own part and shards alike: the counts a fold reads at a bucket's
// start hold the document's own part as it was then.
func TestWindowOverACountWithAnOwnPart(t *testing.T) {
	emulatortest.Require(t)
	t.Parallel()
	const spacing = 200 * time.Millisecond
	ctx := context.Background()
	fs := emulatortest.Client(t)
	coll := "ownwin" + emulatortest.ID(t)
	plain, windowed := layoutOf(t, coll+":views"), layoutOf(t, coll+":views,views_m=views per minute")
	views := core.Count{Field: "views", Shard: "views"}
	id := coll + "/p1"
	if _, err := plain.Counter(fs, id).Create(ctx, map[string]any{"title": "a post"}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(spacing)
	if shard, _, err := New(fs, Config{Layout: plain, InItself: spacing}).Add(ctx, id, views, 3); err != nil || shard != InItself {
		t.Fatalf("3 views of a quiet post: shard %d, %v; want them written into the post", shard, err)
	}

	// The next minute: the window is declared, a view goes to a shard,
	// and a fold makes the window.
	time.Sleep(time.Until(time.Now().Truncate(time.Minute).Add(time.Minute + 100*time.Millisecond)))
	if shard, _, err := New(fs, Config{Layout: windowed, InItself: spacing}).Add(ctx, id, views, 1); err != nil || shard == InItself {
		t.Fatalf("a view of a post with a window: shard %d, %v; want a shard", shard, err)
	}
	if _, err := fold.NewFolder(fs, windowed, spacing).Fold(ctx, id); err != nil {
		t.Fatal(err)
	}
	data := read(t, windowed.Counter(fs, id))
	if data["views"] != int64(4) || data["views_m"] != int64(1) {
		t.Errorf("views %v, views_m %v; want 4, and 1: the view of this minute, not the 3 of the one before", data["views"], data["views_m"])
	}
}
