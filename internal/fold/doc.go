// Package fold brings a counted document up to date with its shards: a
// fold sums each count over the shards of the document's life at one
// read time, reads what else it takes at that time (the counts at the
// starts of buckets its windows cross, the parts of its aggregates), and
// writes it all in one compare-and-set. Rollup's folds, the boundary
// job's, Reset's and Reconcile's are all this package's Folder; where a
// counter's documents are is package core's.
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
// document again. A core.Parent is a fold's view of the counted
// document.
//
// Every fold is a sum, Folder.Gather, and Folder.Write: Gather reads what
// a fold takes beside its sum (the counts at the starts of buckets it
// crosses, and the parts of aggregates it refolds), and Write decides and
// commits. Rollup's folds start from a sum of the shards, an event's
// counts, or a creation's zeros; the boundary job's from a sum just before
// a bucket's start (boundary.go: of a document on one shard, its shard 0
// read by key at that time, sums.go); Fold's, for Reset and Reconcile, from
// a sum now, or, for a part of Reconcile, from what ReadAll read of all
// its documents in one batch and summed of all their shards with one
// query (Known, FoldKnown).
//
// # Counts by time
//
// A document may keep windows of its counts (per day, over 7 days) and
// trends, declared, kept and scored by package bytime over the buckets of
// package calendar, declared in package core. A fold moves them to its
// read time: package bytime's Fold says which starts of buckets it
// crosses must be read and moves the windows from what was read; the
// reads at those past read times, and the write, are here
// (windows.go). The boundary job moves the windows of documents folded
// in no bucket since (boundary.go).
//
// # One shard: a fold with no read
//
// A counter starts on one shard, and most stay there (package core's oneshard.go). On
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
// parts.go, where a document's parts and children are): count, sum
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
// (Write), and records the cell in _tally.rank.
//
// # Sums
//
// Every way of summing shards at one read time is in sums.go, with when
// each is used and why each is exact.
package fold
