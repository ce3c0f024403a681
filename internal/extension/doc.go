// Package extension takes over the counters of Firebase's firestore-counter
// extension: its clients keep counting as they do, and tally moves their
// counts into the counted documents.
//
// # The extension's protocol
//
// A counter of the extension is a field (a dotted path allowed) of any
// document D. Each client picks a random shard id once and adds to its
// own shard, D/_counter_shards_/{id}, with a merge-set of server-side
// increments; a shard may hold several counters' fields. The extension's
// workers move counts out of the shards into partials
// (D/_counter_shards_/\t…, one to four tabs and a prefix of the shard
// ids, holding a list of amounts, _updates_) and out of partials into D's
// fields, each move one transaction. A client shows D's field plus its
// own shard (and its partials, whose field it reads as 0): a count is in
// exactly one of those places at every moment.
//
// # What is moved
//
// Only what the app declares (TALLY_EXTENSION_COUNTERS, declare.go): the
// shards under documents a declaration holds, and in them only the
// declared fields, in whole numbers, with a client's shard id. The rules
// let clients write nothing else; a move, which writes with the
// functions' rights, checks it all again (take.go), so that a shard the
// rules let in by mistake makes and changes no document outside the
// declarations, and none of tally's bookkeeping. A shard that breaks any
// of it is left, and reported; so is one whose amount the document's
// field cannot take without passing int64 (CountEdge for a count tally
// keeps): a shard is deleted only in the commit that adds its amount.
//
// # Moves
//
// A Mover's move of D is one transaction that reads D and every shard
// and partial of D, adds their amounts to D's fields with server-side
// increments, and deletes them (move.go): a count leaves a shard and
// enters D in one commit. A move races the extension's own workers, if
// they still run, only on documents both read, so the transactions
// serialize, and every move, theirs and tally's, keeps the sum of D, its
// shards and its partials: nothing is lost or counted twice, whatever
// interleaves.
//
// A client shows D plus its own shard, with its writes not yet
// acknowledged applied on top: a shard moved while one of its writes is
// still on its way back to the client would show that write twice. So a
// move holds a shard its client wrote within the quiet time
// (MoverOptions.Quiet), and D is then as of just before that shard's
// first write. A shard of zeros has nothing to move, and no move writes
// D for it.
//
// A move records, in D's _tally map, as of when D holds every shard
// write (moved_as_of), and when it wrote (written, which spaces tally's
// folds, and moved): Rollup answers a shard's event once moved_as_of has
// reached the write's time, or once its shard, held, was written again
// (the later write's event answers for it). A move waits until a fold
// spacing has passed since tally's last write of D (written, or D's
// update time where that is within seconds of it: the commit's own), two
// after a move of a document tally also folds, so that its fold has
// every other turn; and it writes D on the condition that D is as it
// read it, so that any number of movers write D at most once a spacing.
// A field TALLY_COUNTS declares is moved into D and into D's tally shard
// 0 in the same commit, so that tally's folds, which sum the tally
// shards, agree with it, and its windows, trends and ranks count what
// the extension's clients add.
//
// Takeover moves every document's shards and partials and removes the
// extension's workers' state, for an app that uninstalled the extension
// (takeover.go).
package extension
