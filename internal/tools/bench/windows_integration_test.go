package bench

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tallycounters/tally/internal/core/calendar"
	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/testkit/tztest"
)

// TestBenchWindows runs the counts-by-time bench across one start of a
// bucket, small: a hot post at 20 views a second and 30 quiet posts, on
// two Rollup instances, with every event delivered twice and some
// delayed, in hour buckets of a zone whose hours are 20 seconds long
// (tztest.Cycle), as the instances read it from its file: the quiet
// posts' views, spread over four fifths of the first bucket, have 4
// seconds to spare on a busy machine. It checks what
// holds at any speed: every total, closed bucket and window is the truth
// the increments' commit times give, every trend is within its bound of
// the exact decayed sum, the boundary job moved every post folded in the
// bucket that ended, and the hot post was written at most once a second.
func TestBenchWindows(t *testing.T) {
	emulatortest.Long(t, "TestBenchWindows crosses the start of a bucket")
	paths := emulatortest.RequirePaths(t)
	t.Parallel()
	dir := t.TempDir()
	first, changes := tztest.Cycle(time.Now(), 20*time.Second, 20*time.Minute)
	if err := tztest.Write(dir, "Tally/Cycle", first, changes); err != nil {
		t.Fatal(err)
	}
	rep, err := RunWindows(context.Background(), WindowsOptions{
		Counters: 30, Boundaries: 1,
		Calendar: Calendar{Unit: calendar.Hour, Zone: "Tally/Cycle", ZoneFile: filepath.Join(dir, "Tally", "Cycle")},
		Setup: Setup{
			Workers: 8, Rate: 20, Spacing: time.Second, Instances: 2, DuplicateRate: 1, DelayRate: 0.2,
			MaxDelay: 300 * time.Millisecond, Modes: []string{WinWindows}, Project: emulatortest.Project,
			Emulator: paths, Settle: emulatortest.Liveness,
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	rep.WriteTable(&out)
	t.Log("\n" + out.String())
	m := rep.Modes[0]
	if m.Errors != 0 || m.Increments < 30 || m.PostsOff != 0 {
		t.Errorf("%d increments, %d failed, %d posts whose views are not their increments", m.Increments, m.Errors, m.PostsOff)
	}
	// The hot post has a bucket before the boundary; each quiet post too.
	if m.Buckets < 31 || m.BucketsOff != 0 || m.WindowsOff != 0 {
		t.Errorf("%d closed buckets, %d off by up to %d; %d windows off; want every one exact", m.Buckets, m.BucketsOff, m.MaxBucketOff, m.WindowsOff)
	}
	// The bound is of this run's own fold spans, however slow the machine.
	if m.Trends != 31 || m.TrendMaxError > 2*m.TrendBound {
		t.Errorf("%d trends, off by up to %g; want 31, within %g (twice the bound of the hot post's longest fold span, %.0f ms)", m.Trends, m.TrendMaxError, 2*m.TrendBound, m.HotMaxGapMS)
	}
	if len(m.Boundary) != 1 || m.Boundary[0].Errors != 0 || m.Boundary[0].Due < 30 {
		t.Errorf("boundary job %+v; want the quiet posts due, and moved", m.Boundary)
	}
	if m.HotPeak > 1 {
		t.Errorf("the hot post written %d times in one second", m.HotPeak)
	}
}
