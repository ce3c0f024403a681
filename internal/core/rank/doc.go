// Package rank keeps a document's place among the documents of a
// collection by one of the fields tally keeps on them (a count, an
// aggregate or a trend): "#12 of 85,310", exact at one read time, in at
// most three reads, with no document written more than once a second.
//
// # Cells
//
// A board (a collection and a field, declared rank(field) in
// TALLY_COUNTS) splits the field's values into cells that never change
// (cell.go): each integer from -255 to 255 is a cell of its own, and
// past them a cell is 1/128 of a power of two (under 0.8% of its values),
// so that a count climbing from 0 to a million crosses some 2,000 cells
// in all. A trend's field, which grows by one every half-life for every
// document alike, is cut into cells of 1/64 of a unit (1% of its score)
// instead. Because the cells are fixed, a fold knows with no read
// whether its document changes cell.
//
// # Moves, in the fold's own commit
//
// A document's bookkeeping records the cell it is counted in
// (_tally.rank.{field}). A fold that writes a value in another cell
// creates, in the same commit as its compare-and-set of the document,
// one move document under the board (tally_ranks/{board}/moves/{id}):
// from the old cell, to the new one. A document's first value is a move
// from nowhere; its deletion, which Rollup is told of, a move to
// nowhere, made once whatever the events' delivery (its id is the
// document's life). So the cells the documents record, at any read
// time, are the summary's cells plus the moves that exist then.
//
// # The summary, folded like a parent
//
// The board's summary (tally_ranks/{board}) holds each occupied cell's
// number of documents and the board's size, exact at its as_of R: a fold
// of it (Fold) reads every move that exists at R, a past read time at
// least a second old, adds them up, and in one commit writes the summary
// (a compare-and-set on its update time, at most once a second) and
// deletes the moves it added. A move is written twice in its life, when
// it is made and when it is folded, a second or more apart.
//
// # A rank
//
// Read reads the summary (one read), the document at R (one read), and,
// if its cell holds more than one value, count() of the documents of its
// cell above it at R: one read, as it counts at most 999 of them. A cell
// of more than 1,000 documents is crowded, and the summary's fold cuts it
// into parts of at most 1,000 each, or of one value, which it counts at R
// (crowd.go): a rank in it counts within its part, and adds the parts
// above. The rank is 1 + the documents of the cells above + those: ties
// share a place. The summary alone gives the board's size, and Place.Top
// the share of the board at or above a place.
package rank
