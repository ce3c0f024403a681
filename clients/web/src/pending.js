// What a count shows: the count a listener last saw, plus this user's
// actions that it does not hold yet, and only those.
//
// A fold's as_of is its read time: the count holds every write committed at
// or before it, and none after. Increment's answer says when an action's
// write committed. So an answered action is part of the count exactly when
// as_of has reached its commit time, and on top of it until then. An
// action never sent is not in the count. An action sent without a sure
// answer (in flight, or a 504 or a lost connection, retried with the same
// Idempotency-Key) may or may not be: the count is held until it is
// answered.
//
// An action Increment wrote into the counted document itself (its answer
// says in_document) is in the document from its write on, whatever as_of,
// which only folds move: its answer's committed is the time that write set
// in the document's _tally.written, so it is part of the count exactly
// when written has reached it.
//
// An aggregate of a document's children (comments=count(comments)) is kept
// in parts, each folded at a read time of its own (_tally.parts.{source}.
// r{lo}.at): a child the user wrote is part of the count exactly when the
// part that holds its id has reached the write's commit time.

import { compareIDs } from "./keys.js";
import { micros } from "./times.js";

/**
 * @typedef {object} Action
 * @property {string} key        Idempotency-Key, kept across every retry
 * @property {string} counter    the counter: an id, or a document path
 * @property {string} [field]    the count on a document
 * @property {number} by         what it adds: +1, -1, ...
 * @property {boolean} [vote]    a vote: true adds the user's, false takes it back
 * @property {string} [once]    counted at most once per user in each bucket of this unit
 * @property {boolean} [sent]    sent at least once without a sure answer
 * @property {string} [committed] when its write committed, once answered
 * @property {boolean} [done]    answered: committed, or changed nothing
 * @property {boolean} [inDocument] written into the counted document itself, as its answer said
 * @property {boolean} [agreed]  a vote answered, and the user's vote document seen as it left it
 * @property {boolean} [held]    a vote answered, that a count holds, kept until its vote document is seen
 * @property {{value: number, asOf: *} | null} [base] the snapshot of the count it was pressed on
 * @property {number} at         when it was pressed (milliseconds since the epoch)
 * @property {boolean} [kept]    written to the store
 * @property {boolean} [unsure]  sent once with no sure answer: it may have been applied
 * @property {{source: string, id: string}} [child] a child written by the user, not sent to Increment: its collection (the aggregate's source) and id
 */

/**
 * The actions a count whose snapshot is as of asOf does not hold yet:
 * those not answered, and those answered that committed after asOf (for a
 * child, after the time of its part in parts; for one written into the
 * document, after written).
 * @param {Action[]} actions
 * @param {*} asOf the count's snapshot time
 * @param {Record<string, Record<string, {at: *}>>} [parts] the document's _tally.parts
 * @param {*} [written] the document's _tally.written
 * @returns {Action[]}
 */
export function outstanding(actions, asOf, parts, written) {
  const countAt = micros(asOf);
  return actions.filter((a) => {
    if (!a.done) return true;
    if (!a.committed) return false; // it changed nothing
    if (a.inDocument) {
      const w = micros(written);
      return w === null || (micros(a.committed) ?? 0) > w;
    }
    const at = a.child ? partAt(parts, a.child.source, a.child.id) : countAt;
    return at === null || (micros(a.committed) ?? 0) > at;
  });
}

/**
 * The time of the part of source that holds the child id: the part that
 * starts last at or before it ("r" and where it starts, as _tally.parts
 * keys them); null while there is none.
 * @param {Record<string, Record<string, {at: *}>> | undefined} parts
 * @param {string} source
 * @param {string} id
 * @returns {number | null}
 */
export function partAt(parts, source, id) {
  /** @type {string | null} */
  let lo = null;
  for (const key of Object.keys(parts?.[source] ?? {})) {
    const start = key.slice(1);
    if (compareIDs(start, id) <= 0 && (lo === null || compareIDs(start, lo) > 0)) lo = start;
  }
  return lo === null ? null : micros(parts?.[source]?.["r" + lo]?.at);
}

/**
 * What to show for a count: its value as of asOf, plus the actions it does
 * not hold.
 * @param {number} value the count, as a listener saw it
 * @param {*} asOf its snapshot time
 * @param {Action[]} actions this user's on this count
 * @param {Record<string, Record<string, {at: *}>>} [parts] the document's _tally.parts
 * @param {*} [written] the document's _tally.written
 * @returns {number}
 */
export function shown(value, asOf, actions, parts, written) {
  return outstanding(actions, asOf, parts, written).reduce((n, a) => n + a.by, value);
}

/**
 * Whether a new snapshot of the count must wait: an action is sent and not
 * answered, so the snapshot may or may not hold it. Until the answer, the
 * count shown stays on the last snapshot taken (which was taken before the
 * action was sent, so cannot hold it), plus the actions: so the number
 * never counts an action twice, nor dips.
 * @param {Action[]} actions
 * @returns {boolean}
 */
export function holds(actions) {
  return actions.some((a) => a.sent && !a.done);
}

/**
 * The user's vote as shown: their last vote, until the vote document's
 * listener has seen it (agreed), then the document (stored), which then
 * says the rest, another device's votes too. An answer can come before the
 * document's snapshot: the vote shown must not flip back in between, nor a
 * press then be taken for a repeat.
 * @param {boolean} stored whether their vote document exists
 * @param {Action[]} actions
 * @returns {boolean}
 */
export function votedShown(stored, actions) {
  const votes = actions.filter((a) => a.vote !== undefined);
  const last = votes[votes.length - 1];
  return last && !last.agreed ? Boolean(last.vote) : stored;
}

/**
 * Marks the answered votes the user's vote document, as its listener saw
 * it (stored), has caught up with: those it shows as they left it, and,
 * on a snapshot that came after a count held them (fresh), every one the
 * count held. An answered vote holds its result from its commit on.
 * @param {boolean} stored whether their vote document exists
 * @param {Action[]} actions
 * @param {boolean} [fresh] stored is from a snapshot that came just now
 */
export function agree(stored, actions, fresh = false) {
  for (const a of actions) {
    if (a.done && a.vote !== undefined && (a.vote === stored || (fresh && a.held))) a.agreed = true;
  }
}

/**
 * The snapshot to show a count on when the first one a page gets came while
 * actions were in flight (after a reload, or in a new tab), and so may or
 * may not hold them: the oldest of the snapshots those actions were
 * pressed on, which holds none of them. Null if one was pressed before any
 * snapshot: nothing is known until it is answered.
 * @param {Action[]} actions
 * @returns {{value: number, asOf: *} | null}
 */
export function pressedOn(actions) {
  const flying = actions.filter((a) => a.sent && !a.done);
  const bases = flying.flatMap((a) => (a.base ? [a.base] : []));
  if (flying.length === 0 || bases.length < flying.length) return null;
  return bases.reduce((x, y) => ((micros(y.asOf) ?? 0) < (micros(x.asOf) ?? 0) ? y : x));
}
