package fold

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/core/aggregate"
)

// The fold's decisions, on no store: each is made on what was read (a
// Parent) and summed (a Sum) alone, and the emulator's tests hold the
// writes they lead to. A Folder with no client is enough for them.

// docsFolder is a Folder of posts with likes, a window of them by
// day and a trend of them, in UTC.
func docsFolder(t *testing.T) *Folder {
	t.Helper()
	l := core.Default()
	var err error
	if l.Docs, err = core.ParseCounts("posts:likes,likes_today=likes per day,hot=trend(likes, 6h)"); err != nil {
		t.Fatal(err)
	}
	l.Zone = time.UTC
	return NewFolder(nil, l, time.Second)
}

// TestCheckDecides: the compare-and-set's checks, each on the document as
// read and the sum: what is written, what is left to a later fold, and
// what sends the fold back to read the document again.
func TestCheckDecides(t *testing.T) {
	f := docsFolder(t)
	guide := NewFolder(nil, core.Default(), time.Second)
	now := time.Now()
	read := core.Parent{Exists: true, Life: "L", Updated: now.Add(-5 * time.Second), Written: now.Add(-5 * time.Second),
		AsOf: now.Add(-5 * time.Second), Totals: []int64{3}, Present: []bool{true}, Anchor: now, AnchorAt: now}
	sum := func(at time.Time, life string, v int64) Sum {
		return Sum{At: at, Life: life, Values: []int64{v}, Shards: []int64{1}}
	}
	recent := read
	recent.Written, recent.Updated = now.Add(-100*time.Millisecond), now.Add(-100*time.Millisecond)
	for _, c := range []struct {
		name   string
		f      *Folder
		p      core.Parent
		s      Sum
		done   bool
		err    error
		counts bool // the plan writes the counts
	}{
		{name: "a newer sum onto a document a spacing old is written", f: f, p: read, s: sum(now, "L", 5), counts: true},
		{name: "a sum no newer than as_of writes no counts, and nothing", f: f, p: read, s: sum(read.AsOf, "L", 5), done: true},
		{name: "a sum of another life's shards: read again", f: f, p: read, s: sum(now, "M", 5), done: true, err: ErrStale, counts: true},
		{name: "within the spacing of the last write: too soon", f: f, p: recent, s: sum(now.Add(-50*time.Millisecond), "L", 5), done: true, err: ErrTooSoon, counts: true},
		{name: "an app's document that is gone stays gone", f: f, p: core.Parent{}, s: sum(now, "L", 5), done: true, counts: true},
		{name: "a guide counter with no parent and shards holding 0: nothing to make", f: guide, p: core.Parent{}, s: sum(now, "", 0), done: true, counts: true},
		{name: "a guide counter with no parent and a count: the fold makes it", f: guide, p: core.Parent{}, s: sum(now, "", 2), counts: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := c.f.planWrite("posts/p", c.p, c.s)
			if w.counts != c.counts {
				t.Errorf("plan writes the counts: %v, want %v", w.counts, c.counts)
			}
			var out Outcome
			done, _, err := c.f.check(context.Background(), "posts/p", c.p, c.s, w, &out)
			if done != c.done || !errors.Is(err, c.err) {
				t.Errorf("check = done %v, %v; want done %v, %v", done, err, c.done, c.err)
			}
		})
	}
}

// TestCheckKnowsPartsSplit: a fold whose parts were split since the
// document was read goes back to read it.
func TestCheckKnowsPartsSplit(t *testing.T) {
	f := docsFolder(t)
	p := core.Parent{Exists: true, Life: "L", Written: time.Now().Add(-time.Minute)}
	w := writePlan{misfit: true, applied: []aggregate.PartFold{{Source: "comments"}}}
	if done, _, err := f.check(context.Background(), "posts/p", p, Sum{At: time.Now()}, w, &Outcome{}); !done || !errors.Is(err, ErrStale) {
		t.Errorf("check of a misfit = %v, %v; want ErrStale", done, err)
	}
}

// TestWindowMoves: a fold writes a window's value with the count's, and
// the next start of a bucket at which it moves with no increment; a fold
// that writes no counts moves no window.
func TestWindowMoves(t *testing.T) {
	f := docsFolder(t)
	day := time.Date(2026, 11, 28, 15, 0, 0, 0, time.UTC)
	p := core.Parent{Exists: true, Life: "L", Totals: []int64{0}, Present: []bool{true}, AsOf: day.Add(-time.Hour), Born: day.Add(-2 * time.Hour)}
	s := Sum{At: day, Life: "L", Values: []int64{4}, Shards: []int64{1}}
	updates, m := f.timeUpdates("posts/p", p, s, true, nil)
	got := map[string]any{}
	for _, u := range updates {
		got[strings.Join(u.FieldPath, ".")] = u.Value
	}
	if got["likes_today"] != int64(4) {
		t.Errorf("likes_today = %v after 4 likes today; want 4 (updates %v)", got["likes_today"], got)
	}
	if next := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC); !m.next.Equal(next) {
		t.Errorf("next_boundary = %v; want the next midnight, %v", m.next, next)
	}
	if updates, _ := f.timeUpdates("posts/p", p, s, false, nil); len(updates) != 0 {
		t.Errorf("a fold of no counts moved windows: %v", updates)
	}
}

// TestWhichSum: a fold sums a document's shards by key (shard 0 alone)
// only where shard 0 held every count at the read time: one shard, had
// since before it, no shrink under way, no bookkeeping of tally before 2;
// else by aggregation.
func TestWhichSum(t *testing.T) {
	docs := docsFolder(t).Layout()
	guide := core.Default()
	at := time.Now()
	one := core.Parent{Exists: true, NumShards: 1, OneSince: at.Add(-time.Second)}
	for _, c := range []struct {
		name     string
		l        core.Layout
		defaults int
		p        func(core.Parent) core.Parent
		byKey    bool
	}{
		{"one shard since before: by key", guide, 1, func(p core.Parent) core.Parent { return p }, true},
		{"one shard since the read time: by aggregation", guide, 1, func(p core.Parent) core.Parent { p.OneSince = at; return p }, false},
		{"many shards: by aggregation", guide, 1, func(p core.Parent) core.Parent { p.NumShards = 4; return p }, false},
		{"shrinking to one: by aggregation", guide, 1, func(p core.Parent) core.Parent { p.Resharding = true; return p }, false},
		{"bookkeeping of tally before 2: by aggregation", guide, 1, func(p core.Parent) core.Parent { p.Legacy = true; return p }, false},
		{"no num_shards on a document, one by default: by key", docs, 1, func(p core.Parent) core.Parent { p.NumShards = 0; return p }, true},
		{"no num_shards on a document, four by default: by aggregation", docs, 4, func(p core.Parent) core.Parent { p.NumShards = 0; return p }, false},
		{"a document that is gone: by aggregation", guide, 1, func(core.Parent) core.Parent { return core.Parent{} }, false},
	} {
		if got := c.p(one).Whole(c.l, c.defaults, at); got != c.byKey {
			t.Errorf("%s: by key %v", c.name, got)
		}
	}
}

// TestPartsLeftToRefold: a fold from scratch refolds every part last
// refolded before it began, and every aggregated collection of which the
// document holds no part.
func TestPartsLeftToRefold(t *testing.T) {
	l := core.Default()
	var err error
	if l.Docs, err = core.ParseCounts("posts:comments=count(comments),stars=sum(reviews.stars)"); err != nil {
		t.Fatal(err)
	}
	f := NewFolder(nil, l, time.Second)
	since := time.Now()
	p := core.Parent{Exists: true, Parts: map[string]aggregate.Parts{
		"comments": {aggregate.PartKey(""): {At: since.Add(-time.Minute)}, aggregate.PartKey("m"): {At: since}},
	}}
	left := map[string]bool{}
	for _, c := range f.partsBefore("posts/p", p, since) {
		left[c.Source+"/"+c.ID] = true
	}
	if len(left) != 2 || !left["comments/"] || !left["reviews/"] {
		t.Errorf("left to refold %v; want the first part of comments, and reviews from scratch", left)
	}
}

// TestPartRefoldMerges: a part refolded at a later read time than the
// document holds is written; one refolded earlier is not, and a fold of
// nothing else then writes nothing; one whose range was split since the
// document was read sends the fold back to read it.
func TestPartRefoldMerges(t *testing.T) {
	l := core.Default()
	var err error
	if l.Docs, err = core.ParseCounts("posts:comments=count(comments)"); err != nil {
		t.Fatal(err)
	}
	f := NewFolder(nil, l, time.Second)
	now := time.Now()
	whole := func(at time.Time) aggregate.Parts { return aggregate.Parts{aggregate.PartKey(""): {At: at}} }
	p := core.Parent{Exists: true, Life: "L", Written: now.Add(-time.Minute), Parts: map[string]aggregate.Parts{"comments": whole(now.Add(-time.Second))}}
	refold := func(at time.Time) Sum {
		return Sum{At: at, Life: "L", Parts: []aggregate.PartFold{{Source: "comments", Parts: whole(at)}}}
	}
	for _, c := range []struct {
		name    string
		p       core.Parent
		s       Sum
		applied int
		done    bool
		err     error
	}{
		{"a later refold is written", p, refold(now), 1, false, nil},
		{"an earlier refold is not, and nothing is", p, refold(now.Add(-time.Hour)), 0, true, nil},
		{"a refold of a range split since: read again", core.Parent{Exists: true, Life: "L", Written: p.Written, Parts: map[string]aggregate.Parts{
			"comments": {aggregate.PartKey(""): {At: now.Add(-time.Second)}, aggregate.PartKey("m"): {At: now.Add(-time.Second)}}}}, refold(now), 0, true, ErrStale},
	} {
		w := f.planWrite("posts/p", c.p, c.s)
		done, _, err := f.check(context.Background(), "posts/p", c.p, c.s, w, &Outcome{})
		if len(w.applied) != c.applied || done != c.done || !errors.Is(err, c.err) {
			t.Errorf("%s: %d applied, done %v, %v; want %d, %v, %v", c.name, len(w.applied), done, err, c.applied, c.done, c.err)
		}
	}
}
