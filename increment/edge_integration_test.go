package increment

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/counter"
	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/fold"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/testkit/layouttest"
)

// TestStepsStopAtTheEdge: a post's likes are 11 short of the most a count
// holds (2^62). Likes of +5 and +5 are counted; +5, +1000 and a keyed +5
// would pass it, and are refused 422, naming the limit, with nothing
// written; -3 is counted; the post's shards hold exactly what was
// answered 200, and its likes the same after a fold. The Go client's
// Add past the edge is refused too (ErrPastLimit), as is one step larger
// than the edge on a post with nothing yet.
func TestStepsStopAtTheEdge(t *testing.T) {
	l := postsLayout(t)
	c := emulatortest.Client(t)
	h := New(c, Config{Layout: layouttest.Public(l)})
	ctx := context.Background()
	name := "posts/" + emulatortest.ID(t)
	if _, err := c.Doc(name).Create(ctx, map[string]any{"title": "near the edge"}); err != nil {
		t.Fatal(err)
	}
	life := emulatortest.Life(t, l, c, name)
	start := core.CountEdge - 11
	if _, err := l.Shard(c, name, life, 0).Set(ctx, map[string]any{"likes": start}, firestore.MergeAll); err != nil {
		t.Fatal(err)
	}
	folder := fold.NewFolder(c, l, time.Millisecond)
	if _, err := folder.Fold(ctx, name); err != nil {
		t.Fatal(err)
	}
	want := start
	for _, s := range []struct {
		body string
		key  string
		by   int64
		code int
	}{
		{`"by":5`, "", 5, 200},
		{`"by":5`, "", 5, 200},
		{`"by":5`, "", 5, 422},
		{`"by":1000`, "", 1000, 422},
		{`"by":5`, "k-" + emulatortest.ID(t), 5, 422},
		{`"by":-3`, "", -3, 200},
	} {
		var header []string
		if s.key != "" {
			header = []string{"Idempotency-Key", s.key}
		}
		code, _, raw := call(h, "", `{"counter":"`+name+`","field":"likes",`+s.body+`}`, header...)
		if code != s.code {
			t.Errorf("%s (key %q): %d %s; want %d", s.body, s.key, code, raw, s.code)
		}
		if code == 422 && !strings.Contains(raw, "4611686018427387904") {
			t.Errorf("%s: the refusal names no limit: %s", s.body, raw)
		}
		if code == 200 {
			want += s.by
		}
	}
	if got := lifeSums(t, c, l, name, life); got["likes"] != want {
		t.Errorf("the shards hold %d likes; want %d, what was answered 200", got["likes"], want)
	}
	time.Sleep(2 * time.Millisecond) // past the folder's spacing of a millisecond
	if _, err := folder.Fold(ctx, name); err != nil {
		t.Fatal(err)
	}
	if snap, err := c.Doc(name).Get(ctx); err != nil || snap.Data()["likes"] != want {
		t.Errorf("the post: %v, %v; want likes %d", snap.Data(), err, want)
	}

	admin := counter.New(c, counter.Options{Layout: layouttest.Public(l)})
	if err := admin.Add(ctx, name, "likes", 100); !errors.Is(err, counter.ErrPastLimit) {
		t.Errorf("the Go client's step past the edge: %v; want ErrPastLimit", err)
	}
	other := "posts/" + emulatortest.ID(t) + "-empty"
	if _, err := c.Doc(other).Create(ctx, map[string]any{"title": "nothing yet"}); err != nil {
		t.Fatal(err)
	}
	if err := admin.Add(ctx, other, "likes", core.CountEdge+1); !errors.Is(err, counter.ErrPastLimit) {
		t.Errorf("a step larger than the edge: %v; want ErrPastLimit", err)
	}
	if err := admin.Add(ctx, other, "likes", core.CountEdge); err != nil {
		t.Errorf("a step of the edge itself, on nothing: %v; want it counted", err)
	}
}
