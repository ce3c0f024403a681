// Package fold brings a counted document up to date with its shards: a
// fold sums each count over the shards of the document's life at one
// read time, reads what else it takes at that time (the counts at the
// starts of buckets its windows cross, the parts of its aggregates), and
// writes it all in one compare-and-set. Rollup's folds, the boundary
// job's, Reset's and Reconcile's are all this package's Folder; where a
// counter's documents are is package core's.
//
// Every fold is a sum (sums.go), Folder.Gather (what it reads beside the
// sum, at the sum's read time R) and Folder.Write, which decides and
// commits: one write of the counts, with R as _tally.as_of, and of
// tally's bookkeeping, on the condition that the document's update time
// is the one the fold read (write.go). So the checks made on that read
// hold at commit: the stored as_of is older than R, and the last fold's
// write is a fold spacing old or more, so that a document takes at most
// one fold a spacing (TALLY_ROLLUP_WINDOW). A write of the app's in
// between fails it (ErrStale), and the fold reads the document again. A
// core.Parent is a fold's view of the counted document.
//
// The same write moves the document's windows and trends (windows.go,
// boundary.go), its aggregates' parts (parts.go), and its cells on the
// boards that rank it, with one move document each in the same commit.
// docs/rollup.md says why a fold is exact, and how a counter on one shard
// folds with no read; docs/windows.md, docs/aggregates.md and docs/rank.md
// say the same of each part; sums.go says when each way of summing is
// used.
package fold
