package counter

import (
	"github.com/tallycounters/tally/internal/core"
	"github.com/tallycounters/tally/layout"
)

// Layout is where a Client's counters are and what they count: the
// collection, the shard field, the counts on the app's documents, the
// time zone of their windows, and tally's subcollections, each as its
// setting gives it (package layout). A Client must be told the Layout
// the deployed functions were, or it reads and writes other documents
// than theirs. The zero Layout is the guide's: counters/{id}/shards/{n}.count.
type Layout = layout.Layout

// LayoutFromEnv reads a Layout through getenv, from the settings the
// functions read from their environment: TALLY_COLLECTION,
// TALLY_SHARD_FIELD, TALLY_COUNTS, TALLY_TIME_ZONE and
// TALLY_SHARDS_COLLECTION, TALLY_VOTERS_COLLECTION,
// TALLY_KEYS_COLLECTION. Pass os.Getenv to read them from the process's
// environment, as the functions do. A bad setting is the error, which
// names it; the Layout is each setting in force.
func LayoutFromEnv(getenv func(string) string) (Layout, error) {
	l, err := core.LayoutFromEnv(getenv)
	if err != nil {
		return Layout{}, err
	}
	return l.Settings(), nil
}

// Drift is what Reconcile found of one count: its total before, the sum
// of its shards (now its total too), their difference, and the shards
// summed.
type Drift = layout.Drift

// Unit is a calendar unit of windows' buckets: "minute", "hour", "day",
// "week" or "month".
type Unit string

// ErrOutcomeUnknown is wrapped by the error of a plain increment that
// failed where it may have been applied: it is not sent again blind.
var ErrOutcomeUnknown = core.ErrOutcomeUnknown
