package core

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/internal/core/bytime"
)

// TestCountedInItself: a count is written into its document itself unless
// a board ranks it, or ranks a trend that weighs it.
func TestCountedInItself(t *testing.T) {
	for _, c := range []struct {
		counts, count string
		want          bool
	}{
		{"posts:views,likes", "views", true},
		{"posts:views,likes,v=views per day,hot=trend(likes + views/10, 6h)", "views", true},
		{"posts:views,likes,hot=trend(likes + views/10, 6h),rank(likes)", "views", true},
		{"posts:views,likes,hot=trend(likes + views/10, 6h),rank(likes)", "likes", false},
		{"posts:views,likes,hot=trend(likes + views/10, 6h),rank(hot)", "views", false},
		{"posts:views,likes,hot=trend(likes, 6h),rank(hot)", "views", true},
	} {
		l := Default()
		var err error
		if l.Docs, err = ParseCounts(c.counts); err != nil {
			t.Fatal(err)
		}
		if got := l.CountedInItself("posts/p1", Count{Field: c.count, Shard: c.count}); got != c.want {
			t.Errorf("%s, %s: %v; want %v", c.counts, c.count, got, c.want)
		}
	}
}

// TestOwnTimeUpdates: an increment written into its document adds to the
// count's windows, moves the trends that weigh it, and sets next_boundary
// to its windows' end where it was later or unset, only while every window
// of the count is in the bucket of its time and not within the margin of
// its end; a trend that does not weigh the count is left alone.
func TestOwnTimeUpdates(t *testing.T) {
	l := Default()
	var err error
	if l.Docs, err = ParseCounts("posts:views,likes,v=views per day,l=likes per day,hot=trend(views, 1h),lh=trend(likes, 1h)"); err != nil {
		t.Fatal(err)
	}
	views := Count{Field: "views", Shard: "views"}
	at := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	day, end := at.Truncate(24*time.Hour), at.Truncate(24*time.Hour).Add(24*time.Hour)
	kept := Parent{Windows: map[string]bytime.State{"v": {Bucket: day}, "l": {Bucket: day}}, Trends: map[string]float64{"lh": 3}}
	updates, after, ok := l.OwnTimeUpdates("posts/p1", kept, views, 2, at, time.Second)
	if !ok {
		t.Fatal("a view in its window's bucket is refused")
	}
	paths := map[string]any{}
	for _, u := range updates {
		paths[strings.Join(u.FieldPath, ".")] = u.Value
	}
	want := bytime.TrendAdd(math.Inf(-1), 2, at, time.Hour)
	if _, ok := paths["v"]; !ok || paths["l"] != nil || paths["lh"] != nil || paths["hot"] != want || paths["_tally.next_boundary"] != end {
		t.Errorf("updates %v; want v, hot %v and next_boundary %v, not l or lh", paths, want, end)
	}
	if after.Trends["hot"] != want || after.Trends["lh"] != 3 || !after.NextBoundary.Equal(end) {
		t.Errorf("after %+v; want hot %v, lh as it was, next boundary %v", after, want, end)
	}
	sooner := kept
	sooner.NextBoundary = at.Add(time.Hour)
	if updates, _, _ := l.OwnTimeUpdates("posts/p1", sooner, views, 2, at, time.Second); slices.ContainsFunc(updates, func(u firestore.Update) bool { return u.FieldPath[len(u.FieldPath)-1] == FieldNextBoundary }) {
		t.Error("a sooner next_boundary is moved")
	}
	for name, c := range map[string]struct {
		p  Parent
		at time.Time
	}{
		"within the margin of the bucket's end": {kept, end.Add(-time.Second / 2)},
		"a bucket no fold has moved it to":      {kept, end.Add(time.Hour)},
		"no window made yet":                    {Parent{}, at},
	} {
		if _, _, ok := l.OwnTimeUpdates("posts/p1", c.p, views, 2, c.at, time.Second); ok {
			t.Errorf("%s: a view is written into the post", name)
		}
	}
}
