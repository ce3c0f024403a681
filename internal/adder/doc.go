// Package adder is the shard write, for the Increment function and the
// Go client: an increment adds to one random shard of a counter in
// [0, num_shards) with one server-side increment, no transaction; the
// increments of a counter that reach an Adder while its last write is in
// flight go together in the next write (group.go). An Adder caches each counter's num_shards for a short time (its life and
// whether it exists with it), reads a busy counter's again sooner so that
// growth shows at once, and on a counter on one shard carries the counted
// document's update time as read to the fold (the increment's side of
// core's one-shard protocol). A count is kept within ±2^62: a step that
// could take it near there reads the shards in its transaction first,
// and is refused if it would pass (edge.go). Where its Config allows it,
// an increment of a quiet document is written into the document itself
// instead, in one write on the condition that the document is as last
// known (own.go, core's own part). It never folds: folds are package
// fold's.
package adder
