package stack

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"testing"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/core/bytime"
	"github.com/tallycounters/tally/internal/core/calendar"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/testkit/layouttest"
	"github.com/tallycounters/tally/internal/testkit/tztest"
)

// windowsSpec declares counts by time on posts, in hour buckets: of a
// zone whose hours are a few seconds long (tztest.Cycle), in these tests.
const windowsSpec = "posts:likes,views,views_min=views per hour,views_3m=views over 3 hours,hot=trend(views + likes, 6h)"

// TestWindowsAcrossBoundaries: views through Increment across real
// boundaries of buckets, in a zone whose clocks change every 4 seconds
// (so each hour of its clock is a bucket 4 seconds long, starting at a
// change: an hour shown twice, a skipped start, a jump to a start, a
// jump back), through the emulator's own delivery, with the boundary job
// the stack runs. The post's views in the bucket, in the last 3 buckets
// and in each closed bucket of its series equal the views whose commit
// times (Increment's answers) fall in them; the trend is the decayed sum
// of them; and at the next bucket, with no view, the boundary job makes
// the bucket's views 0 and keeps the last in the series.
func TestWindowsAcrossBoundaries(t *testing.T) {
	t.Parallel()
	paths := emulatortest.RequirePaths(t)
	cfg := envConfig(t, map[string]string{"TALLY_COUNTS": windowsSpec, "TALLY_ROLLUP_WINDOW": "300ms"})
	first, changes := tztest.Cycle(time.Now(), 4*time.Second, 15*time.Minute)
	var err error
	l := core.MustParse(cfg.Layout)
	if l.Zone, err = tztest.Location("Tally/Cycle", first, changes); err != nil {
		t.Fatal(err)
	}
	cfg.Layout = layouttest.Public(l)
	zone := l.Zone
	ctx := context.Background()
	s, client := startConfig(t, paths, cfg)
	doc := client.Collection("posts").Doc(emulatortest.ID(t))
	if _, err := doc.Create(ctx, map[string]any{"title": "timed"}); err != nil {
		t.Fatal(err)
	}
	// View from now until a second into the third bucket from now: across
	// two starts.
	truth := map[string]int64{} // bucket start -> views committed in it
	var commits []time.Time
	b := calendar.Hour.Start(time.Now(), zone)
	end := calendar.Hour.Next(calendar.Hour.Next(calendar.Hour.Next(b, zone), zone), zone).Add(time.Second)
	for ; time.Now().Before(end); time.Sleep(150 * time.Millisecond) {
		code, body := increment(t, s, fmt.Sprintf(`{"counter":%q,"field":"views"}`, "posts/"+doc.ID))
		if code != 200 {
			t.Fatalf("view: %d %s", code, body)
		}
		var r struct{ Committed time.Time }
		if err := json.Unmarshal([]byte(body), &r); err != nil {
			t.Fatal(err)
		}
		commits = append(commits, r.Committed)
		truth[calendar.BucketKey(bucketOf(changes, r.Committed))]++
	}
	last := commits[len(commits)-1]
	data := settledWindows(t, doc, int64(len(commits)), last)
	checkWindows(t, data, truth, zone, "after the views")
	var want float64
	now := time.Now()
	for _, c := range commits {
		want += math.Exp2(-now.Sub(c).Seconds() / (6 * time.Hour).Seconds())
	}
	if got := bytime.TrendNow(data["hot"].(float64), now, 6*time.Hour); math.Abs(got-want) > 1e-4*want {
		t.Errorf("hot is %g now, the decayed sum of the views' commit times %g", got, want)
	}

	// The next bucket, with no view: the boundary job moves the windows.
	next := calendar.Hour.Next(calendar.Hour.Start(time.Now(), zone), zone)
	time.Sleep(time.Until(next))
	for deadline := time.Now().Add(emulatortest.Liveness); ; time.Sleep(200 * time.Millisecond) { // a liveness bound
		snap, err := doc.Get(ctx)
		if err != nil {
			t.Fatal(err)
		}
		data = snap.Data()
		if b, _ := windowOf(data, "views_min")["b"].(time.Time); !b.Before(next) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a minute after the boundary %s, views_min is still of %v", next, windowOf(data, "views_min")["b"])
		}
	}
	if data["views_min"] != int64(0) {
		t.Errorf("views_min = %v in a bucket with no view, want 0", data["views_min"])
	}
	checkWindows(t, data, truth, zone, "after the boundary")
}

// bucketOf is the start of the bucket that holds at, as the zone's
// changes themselves place it: the last change at or before it.
func bucketOf(changes []tztest.Change, at time.Time) time.Time {
	var start time.Time
	for _, c := range changes {
		if !c.At.After(at) {
			start = c.At
		}
	}
	return start
}

// settledWindows waits until doc holds views views, folded at or after the
// last one's commit, and returns its data.
func settledWindows(t *testing.T, doc *firestore.DocumentRef, views int64, last time.Time) map[string]any {
	t.Helper()
	for deadline := time.Now().Add(emulatortest.Liveness); ; time.Sleep(100 * time.Millisecond) { // a liveness bound
		snap, err := doc.Get(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		data := snap.Data()
		asOf, _ := data[core.FieldBookkeeping].(map[string]any)[core.FieldAsOf].(time.Time)
		if data["views"] == views && !asOf.Before(last) {
			return data
		}
		if time.Now().After(deadline) {
			t.Fatalf("views = %v as of %v a minute after the last view; want %d as of %v", data["views"], asOf, views, last)
		}
	}
}

// windowOf is the bookkeeping of the window field of a post's data.
func windowOf(data map[string]any, field string) map[string]any {
	bk, _ := data[core.FieldBookkeeping].(map[string]any)
	ws, _ := bk[core.FieldWindows].(map[string]any)
	w, _ := ws[field].(map[string]any)
	return w
}

// checkWindows fails unless the post's hour windows hold truth: its
// views in the bucket it is of, in the 3 buckets to it, and in each closed
// bucket its series keeps.
func checkWindows(t *testing.T, data map[string]any, truth map[string]int64, zone *time.Location, when string) {
	t.Helper()
	w := windowOf(data, "views_min")
	b, _ := w["b"].(time.Time)
	if got := data["views_min"]; got != truth[calendar.BucketKey(b)] {
		t.Errorf("%s: views_min = %v in the bucket of %s, want %d", when, got, b, truth[calendar.BucketKey(b)])
	}
	want := int64(0)
	for m, k := b, 0; k < 3; m, k = calendar.Hour.Prev(m, zone), k+1 {
		want += truth[calendar.BucketKey(m)]
	}
	if got := data["views_3m"]; got != want {
		t.Errorf("%s: views_3m = %v, want %d", when, got, want)
	}
	series, _ := w["s"].(map[string]any)
	for m, k := calendar.Hour.Prev(b, zone), 0; k < 5; m, k = calendar.Hour.Prev(m, zone), k+1 {
		got, _ := series[calendar.BucketKey(m)].(int64)
		if got != truth[calendar.BucketKey(m)] {
			t.Errorf("%s: the series holds %d views in the bucket of %s, want %d (series %v)", when, got, m, truth[calendar.BucketKey(m)], series)
		}
	}
}
