package core

import (
	"time"

	"cloud.google.com/go/firestore"

	"github.com/tallycounters/tally/internal/core/aggregate"
	"github.com/tallycounters/tally/internal/core/bytime"
	"github.com/tallycounters/tally/internal/core/rank"
)

// Parent is what the rollup knows of a counted document (the parent
// counters/{id}, or the app's document), and as of when.
type Parent struct {
	Exists     bool
	Life       string    // the life of the counted document (see layout's life.go); "" in the guide layout
	Born       time.Time // on documents, when it was created (its life began); zero if unknown
	Updated    time.Time // update_time: the last write, whoever made it; folds compare-and-set on it
	Written    time.Time // tally's last write of the counts: the fold spacing runs from it
	AsOf       time.Time // the snapshot the counts sum; zero if absent or not a timestamp
	Totals     []int64   // each count's value, in Counts order; 0 if absent or not an integer
	Present    []bool    // whether the document holds each count's field at all
	Own        []int64   // each count's own part (see own.go): written to the document itself, in no shard; nil if none
	NumShards  int       // 0 if absent or unreadable
	Legacy     bool      // holds the bookkeeping of tally before snapshot folds
	Resharding bool      // shrinking to one shard: shard 0 is not yet the whole count
	// ReshardingSince: when the resharding mark was set (a server
	// timestamp); zero if not set, or not a time.
	ReshardingSince time.Time
	// OneSince: if the parent has one shard (OneShard), it has had it since
	// at least this time: its update time when read or told, kept through
	// folds that did not grow it.
	OneSince time.Time
	// Seen: not read, but told by an event (rollup.OneShard): the document
	// had one shard at Updated, and Written is at or before it; AsOf and
	// Totals are unknown.
	Seen bool
	// Parts: the parts of each aggregated source the document holds
	// (package aggregate); nil if none.
	Parts map[string]aggregate.Parts
	// Aggregates: each aggregate field's value as read; nil if none
	Aggregates map[string]any
	// Windows: each per and over window's state; Trends: each trend's
	// field (log2 of its score at the landmark); NextBoundary: the next
	// start of a bucket at which a window changes with no increment.
	// Ranked: the cell each board it is ranked on counts it in, by field
	// (package rank), and RankedValues each such field's value; nil if none.
	Ranked, RankedValues map[string]any
	Windows              map[string]bytime.State
	Trends               map[string]float64
	NextBoundary         time.Time

	// The server's clock had passed Anchor by the local time AnchorAt
	// (which carries a monotonic reading): Now derives from it.
	Anchor   time.Time
	AnchorAt time.Time
}

// ParentFrom reads a snapshot of the counted document id taken by a plain
// get: the server read it at snap.ReadTime, before the call returned at
// returned. Fields of the wrong type read as absent, so the next fold
// repairs them.
func ParentFrom(l Layout, id string, snap *firestore.DocumentSnapshot, returned time.Time) Parent {
	p := Parent{Anchor: snap.ReadTime, AnchorAt: returned}
	if !snap.Exists() {
		if l.OnDocs() {
			p.AsOf = snap.ReadTime // no document then, so nothing to count: tally never creates one
		}
		return p
	}
	data := snap.Data()
	p.Exists, p.Life = true, l.LifeIn(data, snap.CreateTime)
	if l.OnDocs() {
		p.Born = snap.CreateTime
	}
	p.Updated, p.OneSince = snap.UpdateTime, snap.UpdateTime
	p.Written = l.Written(data, snap.UpdateTime)
	p.AsOf = l.AsOf(data)
	p.Totals = l.CountValues(data, l.Counts(id))
	p.Own = l.OwnValues(data, l.Counts(id))
	for _, c := range l.Counts(id) {
		_, ok := data[c.Field]
		p.Present = append(p.Present, ok)
	}
	p.NumShards, _ = l.NumShards(data)
	if !l.OnDocs() {
		_, p.Legacy = data[FieldLegacy]
	}
	p.Resharding = l.Resharding(data)
	p.ReshardingSince, _ = l.bookkeeping(data)[FieldResharding].(time.Time)
	p.Parts = aggregate.PartsFrom(l.bookkeeping(data))
	p.Windows = bytime.States(l.bookkeeping(data)[FieldWindows])
	p.Ranked, _ = l.bookkeeping(data)[rank.FieldRank].(map[string]any)
	for _, b := range l.Boards(id) {
		if p.RankedValues == nil {
			p.RankedValues = map[string]any{}
		}
		p.RankedValues[b.Field] = data[b.Field]
	}
	p.NextBoundary, _ = l.bookkeeping(data)[FieldNextBoundary].(time.Time)
	for _, w := range l.WindowsOf(id) {
		if v, ok := data[w.Field].(float64); ok && w.Kind == bytime.KindTrend {
			if p.Trends == nil {
				p.Trends = map[string]float64{}
			}
			p.Trends[w.Field] = v
		}
	}
	for _, a := range l.Aggregates(id) {
		if p.Aggregates == nil {
			p.Aggregates = map[string]any{}
		}
		p.Aggregates[a.Field] = data[a.Field]
	}
	return p
}

// Now is a time the server's clock has certainly passed by the local time
// local: the anchor plus the local time elapsed since. It is safe to read
// at.
func (p Parent) Now(local time.Time) time.Time {
	return p.Anchor.Add(local.Sub(p.AnchorAt))
}

// Covers reports whether the parent's counts hold a write made at t.
func (p Parent) Covers(t time.Time) bool {
	return !p.AsOf.IsZero() && !t.After(p.AsOf)
}

// Holds reports whether the document holds count i's field, as far as p
// knows: a Parent that was not read (told by an event) is taken to.
func (p Parent) Holds(i int) bool { return i >= len(p.Present) || p.Present[i] }

// Created reports whether p, what a fold knows of the document name,
// answers the creation of its given life at t: the document was read at
// least lag after t and is gone, or is another life (created again
// since); or it is that life, and its counts are folded as of t or later,
// and every aggregated source has its parts. Firestore's reads see every
// commit up to their read time, and lag 0 would do; the emulator's may
// miss a commit timed just before them (a create it has not applied yet),
// and a read the lag later does not.
func (p Parent) Created(life string, t time.Time, lag time.Duration, l Layout, name string) bool {
	if p.Seen {
		return false // told by an event, not read: whether it was folded is not known
	}
	if !p.Exists || p.Life != life {
		return !p.Anchor.Before(t.Add(lag))
	}
	if len(l.Counts(name)) > 0 && (p.AsOf.IsZero() || p.AsOf.Before(t)) {
		return false
	}
	return len(l.Unfolded(name, p)) == 0
}

// Precise cuts t to the microseconds Firestore keeps.
func Precise(t time.Time) time.Time { return t.Truncate(time.Microsecond) }

// CoversChild reports whether the document's aggregates of source hold a
// write made at t to child.
func (p Parent) CoversChild(source, child string, t time.Time) bool {
	if !p.Exists {
		return p.Covers(t)
	}
	key, _, ok := p.Parts[source].Of(child)
	return ok && !t.After(p.Parts[source][key].At)
}

// Unfolded names the start of each aggregated source of the document name
// that p holds no part of: what its first fold aggregates from scratch.
func (l Layout) Unfolded(name string, p Parent) []aggregate.Child {
	var out []aggregate.Child
	for _, src := range aggregate.Sources(l.Aggregates(name)) {
		if len(p.Parts[src]) == 0 {
			out = append(out, aggregate.Child{Source: src, Whole: true})
		}
	}
	return out
}
