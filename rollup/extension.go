package rollup

import "github.com/tallycounters/tally/internal/extension"

// ExtensionCounters are the firestore-counter extension's counters that
// Rollup takes over (TALLY_EXTENSION_COUNTERS): the documents whose
// shards it moves, and the fields their clients count. The zero value
// declares none.
type ExtensionCounters struct{ counters extension.Counters }

// ParseExtensionCounters reads TALLY_EXTENSION_COUNTERS, in TALLY_COUNTS'
// syntax: "pages:likes,stats.views;users/*/posts:likes" ('*' any
// document id; one document's path, "stats/site:visits", works too). ""
// declares none; "true", the earlier setting, is refused with the form
// to give instead.
func ParseExtensionCounters(s string) (ExtensionCounters, error) {
	c, err := extension.ParseCounters(s)
	return ExtensionCounters{c}, err
}

// String writes the counters as ParseExtensionCounters reads them.
func (c ExtensionCounters) String() string { return c.counters.String() }

// DefaultExtensionQuiet is how long after a client's last write of its
// shard a move may take it, by default.
const DefaultExtensionQuiet = extension.DefaultQuiet

// None reports whether no counter is declared.
func (c ExtensionCounters) None() bool { return len(c.counters) == 0 }
