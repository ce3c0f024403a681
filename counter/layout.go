package counter

import (
	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/internal/fold"
)

// Layout is where a Client's counters are and what they count: the
// collection, the shard field, the counts on the app's documents, the
// time zone of their windows, and tally's subcollections. A Client must
// be told the Layout the deployed functions were, or it reads and writes
// other documents than theirs. The zero Layout is the guide's:
// counters/{id}/shards/{n}.count.
type Layout struct{ l core.Layout }

// LayoutFromEnv reads a Layout through getenv, from the settings the
// functions read from their environment: TALLY_COLLECTION,
// TALLY_SHARD_FIELD, TALLY_COUNTS, TALLY_TIME_ZONE and
// TALLY_SHARDS_COLLECTION, TALLY_VOTERS_COLLECTION,
// TALLY_KEYS_COLLECTION. Pass os.Getenv to read them from the process's
// environment, as the functions do.
func LayoutFromEnv(getenv func(string) string) (Layout, error) {
	l, err := core.LayoutFromEnv(getenv)
	return Layout{l}, err
}

func init() {
	core.FromPublic = func(public any) core.Layout { return public.(Layout).l }
	core.ToPublic = func(l core.Layout) any { return Layout{l} }
}

// OnDocuments reports whether the counts are on the app's documents
// (TALLY_COUNTS declares some), whose counters are named by their paths.
func (l Layout) OnDocuments() bool { return l.l.OnDocs() }

// Drift is what Reconcile found of one count: its total before, the sum
// of its shards (now its total too), their difference, and the shards
// summed.
type Drift struct {
	Counter string `json:"counter"`
	Field   string `json:"field,omitempty"` // the count, on documents
	Total   int64  `json:"total"`           // the count before
	Sum     int64  `json:"sum"`             // the shards' sum, now also the count
	Drift   int64  `json:"drift"`           // Total - Sum
	Shards  int    `json:"shards"`          // shard documents summed

	// Extra is how many of them are numbered past num_shards (left by an
	// increment that raced a reshard); NumShards is num_shards, 0 if unset.
	Extra     int `json:"extra_shards"`
	NumShards int `json:"num_shards"`
}

// drifts are the fold's findings as the API gives them.
func drifts(ds []fold.Drift) []Drift {
	out := make([]Drift, len(ds))
	for i, d := range ds {
		out[i] = Drift(d)
	}
	return out
}

// Unit is a calendar unit of windows' buckets: "minute", "hour", "day",
// "week" or "month".
type Unit string

// ErrOutcomeUnknown is wrapped by the error of a plain increment that
// failed where it may have been applied: it is not sent again blind.
var ErrOutcomeUnknown = core.ErrOutcomeUnknown
