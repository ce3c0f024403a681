// Counts by time on the web: a window's value with the user's own actions
// on it, its series, and a trend's score now, all read from the counted
// document as a snapshot holds it.
//
// A per or over window is kept on its document as its field and, in
// tally's bookkeeping, windows.{field}: the bucket it is of (b), the end of
// that bucket (n), the count it is of (c), its kind (k: "per" or "over"),
// the count just before b (v), and each closed bucket's count by its start
// (s, 0 included). A trend is kept as log2 of its score at the landmark,
// and trends.{field}: its half-life in seconds (h) and the landmark (l).

import { outstanding } from "./pending.js";
import { micros } from "./times.js";

/**
 * @typedef {object} WindowState windows.{field}, as a snapshot holds it
 * @property {*} b the start of the bucket the window is of
 * @property {*} n the end of that bucket
 * @property {string} c the count it is of
 * @property {string} [k] "per" or "over"
 * @property {number} [v] the count just before b
 * @property {Record<string, number>} [s] each closed bucket's count, by its start (RFC 3339, UTC)
 */

/**
 * The bookkeeping of a counted document's data: _tally on an app's
 * document, the document itself for a counter of the guide layout.
 * @param {Record<string, any>} data
 * @param {boolean} onDocs
 * @returns {Record<string, any>}
 */
export function bookOf(data, onDocs) {
  return (onDocs ? data._tally : data) ?? {};
}

/**
 * The window a field of data is, or null if it is not one (not declared,
 * or not folded since it was).
 * @param {Record<string, any>} book the document's bookkeeping (bookOf)
 * @param {string} field
 * @returns {WindowState | null}
 */
export function windowOf(book, field) {
  const w = book.windows?.[field];
  return w && typeof w.c === "string" ? w : null;
}

/**
 * What to show of a window: its value in a snapshot as of asOf, plus this
 * user's actions on its count that the snapshot does not hold. Each of
 * them is later than asOf, so in the window's bucket or after it. Once
 * the bucket has ended (now at or past n), before the boundary job moves
 * the document on: a per window is of a new bucket, in which the snapshot
 * holds nothing, so it shows only the actions in it; an over window still
 * holds its oldest bucket, and shows every action on top.
 * @param {number} value the window's field
 * @param {*} asOf the snapshot's as_of
 * @param {WindowState} w
 * @param {import("./pending.js").Action[]} actions this user's on the count w.c
 * @param {number} now milliseconds since the epoch
 * @returns {number}
 */
export function windowShown(value, asOf, w, actions, now) {
  const open = outstanding(actions, asOf);
  const end = micros(w.n);
  if (end === null || now * 1000 < end || w.k === "over") return open.reduce((n, a) => n + a.by, value);
  // An action not answered yet commits now or later.
  const late = open.filter((a) => (a.committed ? micros(a.committed) ?? 0 : now * 1000) >= end);
  return late.reduce((n, a) => n + a.by, 0);
}

/**
 * A per or over window's series as a snapshot of its document holds it:
 * each closed bucket kept, oldest first, then the current one with the
 * count in it so far. Empty if field is not a window folded yet.
 * @param {Record<string, any> | undefined} data the document's data (snapshot.data())
 * @param {string} field
 * @param {{onDocs?: boolean}} [options] onDocs: false for a counter of the guide layout (counters/{id}); default true
 * @returns {{start: Date, count: number}[]}
 */
export function seriesOf(data, field, options = {}) {
  const w = windowOf(bookOf(data ?? {}, options.onDocs ?? true), field);
  if (!w) return [];
  const closed = Object.entries(w.s ?? {})
    .map(([k, n]) => ({ start: new Date(k), count: Number(n) }))
    .sort((x, y) => x.start.getTime() - y.start.getTime());
  const current = Number(data?.[w.c] ?? 0) - Number(w.v ?? 0);
  return [...closed, { start: dateOf(w.b), count: current }];
}

/**
 * A trend's score at now, from a snapshot of its document: the decayed
 * sum of its counts, each unit weighing 2^(-age/half-life). The same
 * factor of now scales every document's score, so a query ordered by the
 * field orders by it. 0 if field is not a trend folded yet.
 * @param {Record<string, any> | undefined} data the document's data (snapshot.data())
 * @param {string} field
 * @param {{onDocs?: boolean, now?: Date}} [options] now: default new Date()
 * @returns {number}
 */
export function trendNow(data, field, options = {}) {
  const S = data?.[field];
  const tr = bookOf(data ?? {}, options.onDocs ?? true).trends?.[field];
  if (typeof S !== "number" || !tr || !(Number(tr.h) > 0) || S === -Infinity) return 0;
  const now = (options.now ?? new Date()).getTime();
  const age = (now - dateOf(tr.l).getTime()) / 1000 / Number(tr.h);
  return 2 ** (S - age);
}

/**
 * A time as a Date: a Firestore Timestamp, an RFC 3339 string, or a Date.
 * @param {*} t
 * @returns {Date}
 */
function dateOf(t) {
  return new Date((micros(t) ?? 0) / 1000);
}
