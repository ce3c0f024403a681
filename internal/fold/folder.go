package fold

import (
	"errors"
	"slices"
	"sync/atomic"
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/core/aggregate"
	"github.com/tallycounters/tally/internal/core/bytime"
	"github.com/tallycounters/tally/internal/core/rank"
)

// ErrSumNotInteger means sum() over a counter's shards came back as a
// double: the sum is past int64, or a shard holds a non-integer count.
// A fold then sums the shards one by one at the same read time, and skips
// those it cannot add (Sum.Skipped): it never stops the count.
var ErrSumNotInteger = errors.New("the shards' sum is not an int64")

// Folder folds counters: it sums each count of a counted document over
// its shards, all at one read time, with no lock on them, and writes those
// sums and that time to the document in one write, if its as_of is older
// and tally's last write of it is at least a window old.
type Folder struct {
	client     *firestore.Client
	layout     core.Layout
	spacing    time.Duration
	defaults   int         // shards of a counted document without num_shards (SetDefaultShards)
	noReadTime atomic.Bool // the client reports no aggregation read times
}

// DefaultSpacing is the least time between two writes of a parent by folds:
// Firestore's sustained one write per second per document.
const DefaultSpacing = time.Second

// Layout is where the Folder's counters are.
func (f *Folder) Layout() core.Layout { return f.layout }

// Window is the least time between two writes of a parent by folds.
func (f *Folder) Spacing() time.Duration { return f.spacing }

// NewFolder returns a Folder for counters in client's database, writing each
// parent at most once per fold spacing.
func NewFolder(client *firestore.Client, l core.Layout, spacing time.Duration) *Folder {
	return &Folder{client: client, layout: l, spacing: spacing, defaults: core.DefaultShards}
}

// SetDefaultShards says how many shards a counted document without
// num_shards has (TALLY_DEFAULT_SHARDS; DefaultShards if n < 1), as
// Increment and Rollup are told: a fold reads such a document's counts
// on shard 0 alone only if that is 1 (see Parent.Whole).
func (f *Folder) SetDefaultShards(n int) {
	if n < 1 {
		n = core.DefaultShards
	}
	f.defaults = n
}

// Sum is sum() over a counter's shards at one read time, for each of its
// counts.
type Sum struct {
	At     time.Time            // the read time
	Life   string               // the life of the counted document whose shards were summed ("" in the guide layout)
	Values []int64              // each count's sum, in Counts order; nil: the counts are not summed
	Shards []int64              // shard documents summed for each count: those that hold its field
	Parts  []aggregate.PartFold // parts of aggregated sources refolded at At
	// BucketStart, if set, is the instant windows move to: the start of
	// a bucket, where At is a microsecond before it (the boundary job's
	// fold); zero: At.
	BucketStart time.Time
	// Boundaries are the counts read at starts of buckets since the
	// document was last folded (ReadBoundaries).
	Boundaries []bytime.Boundary
	// Quiet, if set, is an instant at which the counts were read and found
	// as the last fold left them: every start of a bucket up to it held
	// them, read or not (ReadBoundaries).
	Quiet time.Time
	// Weigh, if set, is the instant a trend weighs the fold's change at:
	// the mean commit time of the increments it holds, as their events
	// said; zero: At.
	Weigh time.Time
	// Skipped are the shards whose count could not be added, by path,
	// with why: one that is no integer, or would take the sum past
	// int64. The counts are exact over the others.
	Skipped map[string]string
}

// Outcome says what one fold did.
type Outcome struct {
	Counter   string    `json:"counter"`
	Before    []int64   `json:"totals_before"` // the counts when read, in Counts order
	Sum       Sum       `json:"-"`
	Own       []int64   `json:"-"`       // each count's part kept in the document itself, which the counts hold beside Sum's (core/own.go)
	Wrote     bool      `json:"wrote"`   // false: the parent already held this or a later snapshot, or there is nothing to hold
	Updated   time.Time `json:"updated"` // the write's commit time
	NumShards int       `json:"num_shards"`
	Grew      bool      `json:"grew"`   // num_shards was raised in this write
	Shrank    bool      `json:"shrank"` // num_shards was lowered in this write
	Parts     int       `json:"parts"`  // parts of aggregated sources refolded in this write
	// AggregatesBefore and Aggregates are the aggregates' values when
	// read and after the write (see aggregate.Values).
	AggregatesBefore map[string]any `json:"aggregates_before,omitempty"`
	Aggregates       map[string]any `json:"aggregates,omitempty"`
	// Children: of valued sources, each child asked for whose value the
	// document's aggregates now hold, with the read time of that value.
	Children []aggregate.Child `json:"-"`
	// Failed: aggregates that could not be folded, for good; they keep
	// their values, and the rest was written.
	Failed []aggregate.Failure `json:"-"`
	// Unread: starts of buckets that this fold closed with no read of the
	// counts there, past Firestore's retention, while the counts changed
	// between the last fold and them: the increments made in the buckets
	// before them since the last fold are counted in a later bucket, not
	// spread over the buckets they were made in.
	Unread []time.Time `json:"unread_boundaries,omitempty"`
	// Moves: the document's moves between cells of the boards it is
	// ranked on, committed with the write (package rank).
	Moves []*rank.Move `json:"-"`
}

// Known is what a caller read of a counted document and summed of its
// shards, for a fold: the document as read (Parent, read at Parent.Anchor)
// and its shards' sum at a read time no later (Sum.At), with the number of
// each shard of its life that exists then (Shards). A part of Reconcile
// knows its counters with a batched read and one query in all (package
// counter), where a fold of each would read its document and aggregate
// its shards.
type Known struct {
	Parent core.Parent
	Sum    Sum
	Shards []int
}

// zero reports whether every count sums to 0.
func (s Sum) zero() bool {
	for _, v := range s.Values {
		if v != 0 {
			return false
		}
	}
	return true
}

// totals are the counts after the fold s onto p.
func (f *Folder) totals(id string, p core.Parent, s Sum) []int64 {
	counts := f.layout.Counts(id)
	totals := slices.Clone(p.Totals)
	if totals == nil {
		totals = make([]int64, len(counts))
	}
	values := core.WithOwn(s.Values, p.Own)
	for i := range counts {
		if !f.layout.OnDocs() || s.Shards[i] > 0 || !p.Holds(i) {
			totals[i] = values[i]
		}
	}
	return totals
}

// windowAt is the instant the fold s moves windows to: its read time, or,
// for the boundary job, the start of the bucket it reads just before.
func (s Sum) windowAt() time.Time {
	if !s.BucketStart.IsZero() {
		return s.BucketStart
	}
	return s.At
}
