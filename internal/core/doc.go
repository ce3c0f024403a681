// Package core is the document model of a tally counter, for the
// programs that work on one: Increment (package adder), Rollup, the folds
// (package fold) and the Go client (package counter). It holds where a
// counter's documents and tally's bookkeeping are, what a counted
// document declares (counts, windows, aggregates, ranks), its lives, the
// settings read from the functions' environment, the one-shard protocol's
// fields, and the errors they answer with. It reads and writes nothing of
// its own beyond a document's life: how a fold sums and writes is package
// fold's, how an increment writes package adder's, HTTP and events the
// functions'.
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
// # The one-shard protocol
//
// A counter starts on one shard, and most stay there (oneshard.go): the
// fields through which Increment tells a fold, on shard 0, the counted
// document's update time and cells as it read them, and the rule that
// says when shard 0 holds a document's whole counts (Layout.OneShard,
// Parent.Whole). docs/rollup.md says how a fold uses them.
//
// # A document's own part
//
// A quiet document's increments may be written into the document itself,
// with the same amounts in _tally.own (own.go): a count is its shards'
// sum plus that own part, which every fold adds (Parent.Own, WithOwn). A
// document with an own part is not on the one-shard protocol's no-read
// fold: shard 0 is not its whole count.
//
// # Errors
//
// Failures a caller should tell apart carry a Code (errors.go): the
// functions' HTTP edge maps each to one status, in one place, and the Go
// client returns them as they are.
package core
