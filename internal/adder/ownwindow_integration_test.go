package adder

import (
	"context"
	"math"
	"testing"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/core/bytime"
	"github.com/tallycounters/tally/internal/core/calendar"
	"github.com/tallycounters/tally/internal/fold"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
)

// TestWindowOverACountWithAnOwnPart: a per-minute window declared on a
// count whose document holds an own part (increments written into it
// while it had no window) counts what was committed since its bucket
// began, own part and shards alike: the counts a fold reads at a bucket's
// start hold the document's own part as it was then.
func TestWindowOverACountWithAnOwnPart(t *testing.T) {
	ctx, fs, coll := context.Background(), emulatortest.Client(t), "ownwin"+emulatortest.ID(t)
	t.Parallel()
	plain, windowed := layoutOf(t, coll+":views"), layoutOf(t, coll+":views,views_m=views per minute")
	views := core.Count{Field: "views", Shard: "views"}
	id := newPost(t, fs, coll)
	time.Sleep(ownSpacing)
	if shard, _, err := New(fs, Config{Layout: plain, InItself: ownSpacing}).Add(ctx, id, views, 3); err != nil || shard != InItself {
		t.Fatalf("3 views of a quiet post: shard %d, %v; want them written into the post", shard, err)
	}

	// The next minute: the window is declared, a view goes to a shard,
	// and a fold makes the window.
	time.Sleep(time.Until(time.Now().Truncate(time.Minute).Add(time.Minute + 100*time.Millisecond)))
	if shard, _, err := New(fs, Config{Layout: windowed, InItself: ownSpacing}).Add(ctx, id, views, 1); err != nil || shard == InItself {
		t.Fatalf("a view of a post with a window: shard %d, %v; want a shard", shard, err)
	}
	if _, err := fold.NewFolder(fs, windowed, ownSpacing).Fold(ctx, id); err != nil {
		t.Fatal(err)
	}
	data := read(t, windowed.Counter(fs, id))
	if data["views"] != int64(4) || data["views_m"] != int64(1) {
		t.Errorf("views %v, views_m %v; want 4, and 1: the view of this minute, not the 3 of the one before", data["views"], data["views_m"])
	}

	// Its window now made, the post takes views into itself, the window
	// with them, until the minute ends.
	time.Sleep(ownSpacing)
	quiet := New(fs, Config{Layout: windowed, InItself: ownSpacing})
	if shard, _, err := quiet.Add(ctx, id, views, 2); err != nil || shard != InItself {
		t.Fatalf("2 views of a quiet post whose window is in its bucket: shard %d, %v; want them written into the post", shard, err)
	}
	data = read(t, windowed.Counter(fs, id))
	minute := core.StateOf(windowed, data, "views_m").Bucket
	if data["views"] != int64(6) || data["views_m"] != int64(3) {
		t.Errorf("views %v, views_m %v; want 6 and 3", data["views"], data["views_m"])
	}

	// The next minute: the window is past its bucket until a fold moves
	// it on, so a view goes to a shard; the fold then closes the minute
	// before with what was committed in it, own part and shards alike.
	time.Sleep(time.Until(time.Now().Truncate(time.Minute).Add(time.Minute + 100*time.Millisecond)))
	if shard, _, err := quiet.Add(ctx, id, views, 1); err != nil || shard == InItself {
		t.Fatalf("a view of a post whose window's bucket has ended: shard %d, %v; want a shard", shard, err)
	}
	if _, err := fold.NewFolder(fs, windowed, ownSpacing).Fold(ctx, id); err != nil {
		t.Fatal(err)
	}
	data = read(t, windowed.Counter(fs, id))
	st := core.StateOf(windowed, data, "views_m")
	closed := st.Series[calendar.BucketKey(minute)]
	if data["views"] != int64(7) || data["views_m"] != int64(1) || closed != 3 || !st.Bucket.After(minute) {
		t.Errorf("views %v, views_m %v, the minute before %d (bucket %v, then %v); want 7, 1, and 3: a shard's view and 2 written into the post",
			data["views"], data["views_m"], closed, st.Bucket, minute)
	}
}

// TestOwnWriteMovesTrends: a view written into a post itself moves the
// trend that weighs views, as a fold would have; a like, which a board
// ranks, goes to a shard, and the next fold adds only the like to the
// trend: nothing is weighed twice.
func TestOwnWriteMovesTrends(t *testing.T) {
	ctx, fs, coll := context.Background(), emulatortest.Client(t), "owntrend"+emulatortest.ID(t)
	t.Parallel()
	l := layoutOf(t, coll+":views,likes,views_h=views per hour,hot=trend(likes + views/10, 1h),rank(likes)")
	views, likes := core.Count{Field: "views", Shard: "views"}, core.Count{Field: "likes", Shard: "likes"}
	id := newPost(t, fs, coll)
	if left := time.Until(time.Now().Truncate(time.Hour).Add(time.Hour)); left < 2*time.Minute {
		time.Sleep(left + 100*time.Millisecond) // all in one hour's bucket
	}
	a := New(fs, Config{Layout: l, InItself: ownSpacing})
	folder := fold.NewFolder(fs, l, ownSpacing)
	if shard, _, err := a.Add(ctx, id, views, 10); err != nil || shard == InItself {
		t.Fatalf("the first views of a post no fold has made windows for: shard %d, %v; want a shard", shard, err)
	}
	if _, err := folder.Fold(ctx, id); err != nil {
		t.Fatal(err)
	}
	before, _ := read(t, l.Counter(fs, id))["hot"].(float64)
	time.Sleep(ownSpacing)
	a = New(fs, Config{Layout: l, InItself: ownSpacing}) // reads the post as the fold left it
	if shard, _, err := a.Add(ctx, id, views, 10); err != nil || shard != InItself {
		t.Fatalf("views of a quiet post: shard %d, %v; want them written into the post", shard, err)
	}
	data := read(t, l.Counter(fs, id))
	own, _ := data["hot"].(float64)
	if data["views"] != int64(20) || data["views_h"] != int64(20) || !(own > before) {
		t.Fatalf("views %v, views_h %v, hot %v from %v; want 20, 20, and hot up", data["views"], data["views_h"], own, before)
	}
	time.Sleep(ownSpacing)
	if shard, _, err := a.Add(ctx, id, likes, 1); err != nil || shard == InItself {
		t.Fatalf("a like, ranked: shard %d, %v; want a shard", shard, err)
	}
	out, err := folder.Fold(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	data = read(t, l.Counter(fs, id))
	want := bytime.TrendAdd(own, 1, out.Sum.At, time.Hour)
	if got, _ := data["hot"].(float64); math.Abs(got-want) > 1e-9 || data["views"] != int64(20) || data["likes"] != int64(1) {
		t.Errorf("hot %v; want %v, the views' weight as written into the post and the like's as folded; views %v, likes %v", got, want, data["views"], data["likes"])
	}
}

// ownSpacing is the fold spacing of these tests.
const ownSpacing = 200 * time.Millisecond

// newPost makes a post of the collection coll, and returns its path.
func newPost(t *testing.T, fs *firestore.Client, coll string) string {
	t.Helper()
	id := coll + "/p1"
	if _, err := fs.Doc(id).Create(context.Background(), map[string]any{"title": "a post"}); err != nil {
		t.Fatal(err)
	}
	return id
}
