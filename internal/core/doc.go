// Package core is what a tally counter is, for the three programs
// that work on one: the Increment function, the Rollup function and the
// Go client (package counter). It holds where a counter's documents are,
// how an increment writes a shard, how a fold brings the counted document
// up to date, the one-shard protocol between the two, and the errors they
// answer with. It holds nothing of HTTP or of events: the Eventarc
// triggers a layout needs are package trigger's.
//
// # Documents
//
// A Layout says where counters live. In the guide layout (Default), the
// layout of Google's distributed-counter guide, counter likes is the
// document counters/likes, whose total readers read, and its shards are
// counters/likes/shards/{n}, each with a count. With counts on documents
// (Layout.Docs, TALLY_COUNTS), the counts are fields of the app's own
// documents, posts/p.likes and posts/p.views, and tally keeps its
// bookkeeping in the document's map field _tally; a document's shards,
// votes and keys are kept under its life (posts/p/lives/{life}/shards/{n}),
// its create time, so that a document deleted and created again starts
// from nothing (life.go).
//
// The two are a Layout's kinds (kind.go): guide.go and documents.go each
// answer, for theirs, where a counter's documents and its bookkeeping
// are, what it counts and what lives it has; Layout holds the settings of
// both (read from the functions' environment by LayoutFromEnv,
// settings.go) and asks its kind wherever they differ.
//
// # An increment
//
// Package adder's Adder adds to a counter with one server-side increment
// of one random shard in [0, num_shards): one write, no transaction. It
// reads the counted document at most once per cache TTL and instance, for
// num_shards, for whether it exists, and for its life; a counter it writes
// often it reads again sooner, so that it sees growth at once. It uses
// this package's layout and the increment's side of the one-shard
// protocol below; nothing here uses it.
//
// # A fold
//
// A Folder folds a counter (fold.go): it sums each count over the
// shards of the document's life at one read time R, with aggregation
// queries and no lock on the shards, and writes every sum with R as
// _tally.as_of (as_of in the guide layout), in one write that names only
// the counts and tally's bookkeeping (write.go). The write is a
// compare-and-set on the document's update time as the fold knew it, so
// the checks made on that view hold at commit: the stored as_of is older
// than R, and the last fold's write is a fold spacing old or more (the
// spacing runs from it, so that a document takes at most one fold a
// spacing, TALLY_ROLLUP_WINDOW). A
// write of the app's in between fails it, and the fold reads the
// document again. A Parent is a fold's view of the counted document
// (parent.go).
//
// Every fold is a sum, Folder.Gather, and Folder.Write: Gather reads what
// a fold takes beside its sum (the counts at the starts of buckets it
// crosses, and the parts of aggregates it refolds), and Write decides and
// commits. Rollup's folds start from a sum of the shards, an event's
// counts, or a creation's zeros; the boundary job's from a sum just before
// a bucket's start (sweep.go: of a document on one shard, its shard 0 read
// by key at that time, oneshard.go); Fold's, for Reset and Reconcile, from
// a sum now, or, for a part of Reconcile, from what package counter read
// of all its documents in one batch and summed of all their shards with
// one query (Known, FoldKnown).
//
// # Counts by time
//
// A document may keep windows of its counts (per day, over 7 days) and
// trends, declared, kept and scored by package bytime over the buckets of
// package calendar (windows.go, windowstate.go). A fold moves them to its
// read time: package bytime's Fold says which starts of buckets it
// crosses must be read and moves the windows from what was read; the
// reads at those past read times, and the write, are here
// (windowfold.go). The boundary job moves the windows of documents folded
// in no bucket since (sweep.go).
//
// # One shard: a fold with no read
//
// A counter starts on one shard, and most stay there (oneshard.go). On
// one shard, shard 0's counts after a write are the whole counts at that
// write's update time, and the write's event carries them: a fold may
// write them as of that time, with no sum, if the document had one shard
// already before that write, so that no write at or after it went
// elsewhere (Parent.Whole). It needs the document's update time for its
// compare-and-set: the first increment after each read Increment makes
// of the document writes that update time on shard 0 (parent_version),
// and a fold that knows no later version compares and sets on it, with no
// read at all. Either is safe because of the compare-and-set: if the
// document changed since (it grew, a fold or the app wrote it), the write
// fails, and the fold reads it and sums as any other. A count an event
// carries is never the basis of anything else: growth is measured on
// sums, and an event dated after it came gives no counts.
//
// # Aggregates
//
// A counted document may also hold aggregates of the app's documents
// (package aggregate: its declarations, parts, records and refolds;
// aggregates.go, where a document's parts and children are): count, sum
// or average over a collection, such as a post's comments. A child's write is a hint only: a fold runs
// Firestore's aggregations over the children at one read time and writes
// their results, in the same write as the counts. The children are kept
// in parts, ranges of ids of at most PartMax, so that a child's write
// refolds one part, not the whole collection (aggregate.Doc.Refold). A
// fold's part work is bounded (PartStep, and half its time): it writes
// what it did, and leaves the rest to the next fold, so that a document of
// any size moves on however busy; a part of a summed collection writes its
// records as soon as it is refolded, and a part whose records are not one
// a child reads its children again.
//
// # Rank
//
// A collection declared rank(field) keeps its documents' places (package
// rank): a fold whose write moves the document's value into another of
// the board's fixed cells creates one move document in the same commit
// (Write), and records the cell in _tally.rank (ranks.go).
//
// # Errors
//
// Failures a caller should tell apart carry a Code (errors.go): the
// functions' HTTP edge maps each to one status, in one place, and the Go
// client returns them as they are.
package core
