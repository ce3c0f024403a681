// Package rollup is the Rollup function: it keeps each counted document's
// counts equal to the sums of its shards by snapshot folds. A count is
// always sum() of the shards at one server read time, written with that
// time as as_of, at most once per fold spacing per counter, by whichever
// instance gets there first. What a fold is, and how it writes, is package
// fold's (fold.Folder); this package decides when to fold, and
// answers events.
//
// A shard's write event is a hint that the counter changed at a time
// (decode.go, hint.go); its handler answers once the counted document's
// as_of has reached that time (handler.go). The tracker holds the hints
// of one instance until a fold covers them (tracker.go). For each counter
// it plans one step at a time (plan.go): read the parent, fold, or probe,
// and how long to wait first. A fold (fold.go) sums the shards, or, on a
// counter on one shard, takes the counts from an event with no read
// (oneshard.go); a busy counter grows, measured on sums (grow.go). Whether
// other instances fold the same counters changes what a fold may trust
// (sharing.go).
//
// The tracker reads and writes through a store (a fold.Folder) and
// tells time by a clock it is given, so its decisions are tested without
// a database (plan_test.go, tracker_test.go); the protocol as a whole is
// tested on the emulator, with real trigger events.
//
// Counts on the app's documents (core.Layout.Docs) fold the same way, a
// document at a time: each of its counts is summed over its shards on its
// own (an aggregation sees only the documents that hold every field it
// names), all at one read time, and written together in one update that
// names only the counts and tally's _tally map, on the condition that the
// document is as the fold read it. A write of the app's in between makes
// the fold read again and write again; a document the app deleted is never
// written, and the events of its shards are answered. A document deleted
// and created again at the same path is another life of it (see package
// core): a fold sums the shards of the life the document has. An event of
// an earlier life's shard (an Increment whose cache still held that life)
// is answered once what that life took after the document's began is
// moved into it (package lives, strays.go), and a fold covers it.
package rollup
