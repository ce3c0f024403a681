package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tallycounters/tally/internal/testkit/emulatortest"
	"github.com/tallycounters/tally/internal/testkit/tztest"
)

// seriesJSON runs tally series --json and returns its buckets.
func seriesJSON(t *testing.T, env []string, id, field string) []struct {
	Start time.Time `json:"start"`
	Count int64     `json:"count"`
} {
	t.Helper()
	stdout, stderr, code := tallyOut(t, env, "series", id, field, "--json")
	var out struct {
		Series []struct {
			Start time.Time `json:"start"`
			Count int64     `json:"count"`
		} `json:"series"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); code != 0 || err != nil {
		t.Fatalf("tally series %s %s --json: exit %d, %v\n%s%s", id, field, code, err, stdout, stderr)
	}
	return out.Series
}

// TestSeriesOfAYearInHavana: a 400-day series in America/Havana, read
// through tally series, lists one bucket a day, each starting at its
// midnight, or, on 2026-03-08, whose midnight the clocks skip, at 01:00
// when they go forward; each where the day before ends. Before, that
// day's bucket began at 23:00 the day before, and a fold across it never
// ended.
func TestSeriesOfAYearInHavana(t *testing.T) {
	t.Parallel()
	host, project := emulatorHost(t)
	fs := emulatortest.ClientAt(t, host, project)
	if _, err := fs.Doc("posts/p1").Create(context.Background(), map[string]any{"title": "hi"}); err != nil {
		t.Fatal(err)
	}
	env := []string{"FIRESTORE_EMULATOR_HOST=" + host, "GOOGLE_CLOUD_PROJECT=" + project, "TALLY_TIME_ZONE=America/Havana",
		"TALLY_COUNTS=posts:views,views_d=views per day keep 400"}
	for _, args := range [][]string{{"incr", "posts/p1", "views", "--by", "2"}, {"reconcile", "posts/p1"}} {
		if out, code := cliWith(t, env, args...); code != 0 {
			t.Fatalf("tally %s: exit %d\n%s", strings.Join(args, " "), code, out)
		}
	}
	havana, err := time.LoadLocation("America/Havana")
	if err != nil {
		t.Fatal(err)
	}
	series := seriesJSON(t, env, "posts/p1", "views_d")
	if len(series) != 401 || series[400].Count != 2 {
		t.Fatalf("%d buckets, the last of count %d; want 400 closed days and today's, with 2", len(series), series[len(series)-1].Count)
	}
	skipped := time.Date(2026, 3, 8, 5, 0, 0, 0, time.UTC) // 00:00 CST is 01:00 CDT
	sawSkipped := false
	for i, b := range series {
		local := b.Start.In(havana)
		switch {
		case b.Start.Equal(skipped):
			sawSkipped = true
		case local.Hour() != 0 || local.Minute() != 0:
			t.Errorf("the bucket of %s starts at %s, not at midnight", local.Format(time.DateOnly), local.Format(time.RFC3339))
		}
		if i > 0 {
			prev := series[i-1].Start.In(havana)
			y, m, d := prev.Date()
			if y, m, d = time.Date(y, m, d+1, 0, 0, 0, 0, time.UTC).Date(); local.Year() != y || local.Month() != m || local.Day() != d {
				t.Errorf("the bucket after %s is of %s", prev.Format(time.RFC3339), local.Format(time.RFC3339))
			}
		}
	}
	if !sawSkipped {
		t.Errorf("no bucket starts at 2026-03-08 01:00 CDT, where Havana's clocks skip midnight")
	}
}

// changingZone writes a zone into dir whose clocks change every step
// from from on, for 12 minutes (tztest.Cycle), and returns the changes.
func changingZone(t *testing.T, dir, name string, from time.Time, step time.Duration) []time.Time {
	t.Helper()
	first, changes := tztest.Cycle(from, step, 12*time.Minute)
	if err := tztest.Write(dir, name, first, changes); err != nil {
		t.Fatal(err)
	}
	at := make([]time.Time, len(changes))
	for i, c := range changes {
		at[i] = c.At
	}
	return at
}

// TestWindowsAcrossChangesOfTheClocks: a post's views through serve, in
// a zone of the test's own whose clocks change every 3 seconds (an hour
// shown twice, an hour whose start is skipped, a jump to an hour's start,
// a jump back), counted per hour: tally series gives each bucket, each
// starting at a change, with exactly the views whose commit times fall in
// it, as the changes themselves place them.
func TestWindowsAcrossChangesOfTheClocks(t *testing.T) {
	t.Parallel()
	emulatortest.Long(t, "views across six changes of the clocks, 3 s apart")
	dir := t.TempDir()
	step := 3 * time.Second
	changes := changingZone(t, dir, "Tally/Changes", time.Now(), step)
	env := []string{"ZONEINFO=" + dir, "TALLY_TIME_ZONE=Tally/Changes", "TALLY_ROLLUP_WINDOW=300ms",
		"TALLY_COUNTS=posts:views,views_h=views per hour keep 100"}
	cmd, out, stderr := start(t, env, "serve", "--port", "0")
	r := waitReady(t, out, stderr)
	// With windows declared, serve runs the boundary job's parts through
	// the Pub/Sub emulator, as deployed, and stops it as it stops.
	pubsub := 0
	for _, l := range r.lines {
		if m := pubsubLine.FindStringSubmatch(l); m != nil {
			pubsub, _ = strconv.Atoi(m[1])
		}
	}
	if pubsub == 0 {
		t.Errorf("serve with windows declared started no Pub/Sub emulator:\n%s", strings.Join(r.lines, "\n"))
	}
	defer func() {
		cmd.Process.Signal(syscall.SIGINT)
		waitExit(t, cmd)
		if pubsub != 0 && !gone(pubsub) {
			t.Errorf("the Pub/Sub emulator (pid %d) is still running after serve stopped", pubsub)
		}
	}()
	fs := serveClient(t, r.emulator)
	if _, err := fs.Doc("posts/timed").Create(context.Background(), map[string]any{"title": "timed"}); err != nil {
		t.Fatal(err)
	}
	// View across the next six changes.
	now := time.Now()
	var bounds []time.Time
	for _, c := range changes {
		if c.After(now) && len(bounds) < 7 {
			bounds = append(bounds, c)
		}
	}
	if len(bounds) < 7 {
		t.Fatalf("serve was ready at %s, past the zone's changes", now)
	}
	truth := map[time.Time]int64{} // a bucket's start -> views committed in it
	var last time.Time
	for time.Now().Before(bounds[6]) {
		resp, err := http.Post(r.functions+"/Increment", "application/json", strings.NewReader(`{"counter":"posts/timed","field":"views"}`))
		if err != nil {
			t.Fatal(err)
		}
		var a struct{ Committed time.Time }
		err = json.NewDecoder(resp.Body).Decode(&a)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || err != nil {
			t.Fatalf("view: %s %v", resp.Status, err)
		}
		last = a.Committed
		start := time.Time{}
		for _, c := range changes {
			if !c.After(a.Committed) {
				start = c
			}
		}
		truth[start]++
		time.Sleep(150 * time.Millisecond)
	}
	var total int64
	for _, n := range truth {
		total += n
	}
	envCLI := append([]string{"FIRESTORE_EMULATOR_HOST=" + r.emulator}, env...)
	emulatortest.Until(t, fmt.Sprintf("the series of views_h to hold %d views as of %s", total, last), func() (any, bool) {
		var sum int64
		series := seriesJSON(t, envCLI, "posts/timed", "views_h")
		for _, b := range series {
			sum += b.Count
		}
		snap, err := fs.Doc("posts/timed").Get(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		asOf, _ := snap.Data()["_tally"].(map[string]any)["as_of"].(time.Time)
		return series, sum == total && !asOf.Before(last)
	})
	series := seriesJSON(t, envCLI, "posts/timed", "views_h")
	got := map[time.Time]int64{}
	for _, b := range series {
		if b.Count != 0 {
			got[b.Start.UTC()] = b.Count
		}
		if !b.Start.Before(changes[0]) && !containsTime(changes, b.Start) { // before the first, hours of one offset
			t.Errorf("a bucket starts at %s, at no change of the clocks", b.Start.UTC())
		}
	}
	for start, n := range truth {
		if got[start.UTC()] != n {
			t.Errorf("the bucket of %s holds %d views, want %d (series %v)", start.UTC().Format(time.RFC3339), got[start.UTC()], n, series)
		}
	}
	if len(got) != len(truth) {
		t.Errorf("the series has %d buckets with views, want %d: %v against %v", len(got), len(truth), got, truth)
	}
}

func containsTime(ts []time.Time, t time.Time) bool {
	for _, x := range ts {
		if x.Equal(t) {
			return true
		}
	}
	return false
}
