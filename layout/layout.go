// Package layout is what tally's public packages and its core share: the
// Layout of a deployment's counters, as its settings give it, and what a
// reconcile finds of a count (Drift). It imports nothing of tally, so
// that every package may hold a Layout without holding another's types.
package layout

import (
	"strings"
	"time"
)

// The settings of a Layout, as the functions read them from their
// environment (FromEnv), with the value an unset or blank one takes.
const (
	EnvCollection = "TALLY_COLLECTION"        // default "counters"
	EnvShardField = "TALLY_SHARD_FIELD"       // default "count"
	EnvCounts     = "TALLY_COUNTS"            // counts on the app's documents: "posts:likes,views;users/*/posts:likes"
	EnvTimeZone   = "TALLY_TIME_ZONE"         // the time zone of windows' buckets, an IANA name; default UTC
	EnvShards     = "TALLY_SHARDS_COLLECTION" // subcollection of shards under each counted document; default "shards"
	EnvVoters     = "TALLY_VOTERS_COLLECTION" // default "voters"
	EnvKeys       = "TALLY_KEYS_COLLECTION"   // default "keys"
)

// The defaults of the settings.
const (
	DefaultCollection = "counters" // guide layout: the collection of counters
	DefaultShardField = "count"    // guide layout: the shard field
	DefaultTimeZone   = "UTC"
	DefaultShards     = "shards" // subcollection of shards under each counted document
	DefaultVoters     = "voters" // subcollection: one document per signed-in user's vote
	DefaultKeys       = "keys"   // subcollection: one document per idempotency key of the last TTL
)

// Layout is where a deployment's counters are and what they count, as its
// settings say: each field is the setting named beside it, and an empty
// one takes its default. The zero Layout is the guide's:
// counters/{id}/shards/{n}.count.
//
// A Layout is only text here. The packages that take one (counter,
// increment, rollup, setup) read it: counter.LayoutFromEnv and
// setup.ConfigFromEnv answer a bad setting with an error naming it, and
// a constructor given a Layout that does not read panics, as
// regexp.MustCompile does, since such a Layout is a fault of the code
// that built it.
type Layout struct {
	Collection string // TALLY_COLLECTION: the guide layout's collection of counters
	ShardField string // TALLY_SHARD_FIELD: the guide layout's integer field of each shard
	Counts     string // TALLY_COUNTS: counts on the app's documents; none: the guide layout
	TimeZone   string // TALLY_TIME_ZONE: the time zone of windows' buckets, an IANA name
	Shards     string // TALLY_SHARDS_COLLECTION: the subcollection of shards
	Voters     string // TALLY_VOTERS_COLLECTION: the subcollection of votes
	Keys       string // TALLY_KEYS_COLLECTION: the subcollection of idempotency keys' records

	// Zone, if set, is the time zone itself, taken as it is where
	// TimeZone would be looked up by name: one the zone database does not
	// hold (time.LoadLocationFromTZData), as a test of a change of the
	// clocks makes. TimeZone is then its name (Zone.String()).
	Zone *time.Location
}

// FromEnv is the Layout that getenv's settings give, each trimmed. Pass
// os.Getenv to read the process's environment, as the functions do.
func FromEnv(getenv func(string) string) Layout {
	get := func(key string) string { return strings.TrimSpace(getenv(key)) }
	return Layout{
		Collection: get(EnvCollection),
		ShardField: get(EnvShardField),
		Counts:     get(EnvCounts),
		TimeZone:   get(EnvTimeZone),
		Shards:     get(EnvShards),
		Voters:     get(EnvVoters),
		Keys:       get(EnvKeys),
	}
}

// InForce is l with each empty setting set to its default.
func (l Layout) InForce() Layout {
	or := func(s *string, def string) {
		if *s == "" {
			*s = def
		}
	}
	or(&l.Collection, DefaultCollection)
	or(&l.ShardField, DefaultShardField)
	if l.Zone != nil {
		or(&l.TimeZone, l.Zone.String())
	}
	or(&l.TimeZone, DefaultTimeZone)
	or(&l.Shards, DefaultShards)
	or(&l.Voters, DefaultVoters)
	or(&l.Keys, DefaultKeys)
	return l
}

// Drift is what a reconcile found and repaired, for one count: its total
// before, the sum it was set to, their difference, and the shards summed.
type Drift struct {
	Counter string `json:"counter"`
	Field   string `json:"field,omitempty"` // the count, on documents
	Total   int64  `json:"total"`           // the count before
	Sum     int64  `json:"sum"`             // the shards' sum and the document's own part, now also the count
	Drift   int64  `json:"drift"`           // Total - Sum
	Shards  int    `json:"shards"`          // shard documents summed

	// Extra is how many of them are numbered past num_shards (left by an
	// increment that raced a reshard); NumShards is num_shards, 0 if unset.
	Extra     int `json:"extra_shards"`
	NumShards int `json:"num_shards"`
}
