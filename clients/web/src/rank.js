// A document's place among its collection's, by a field tally ranks
// (declared rank(field) in TALLY_COUNTS): "#12 of 85,310". A page cannot
// read Firestore at a past read time, which an exact place needs, so
// Increment answers it (GET ?rank=): two or three reads on the server,
// exact at the time it reports. onRank follows the board's summary, one
// document that tally writes at most once a second, and asks again each
// time it changes: the page never reads the collection.

import { getToken } from "firebase/app-check";
import { doc, onSnapshot } from "firebase/firestore";

/**
 * @typedef {import("./client.js").Client} Client
 * @typedef {import("../index").Place} Place
 */

/** The collection of boards' summaries (package rank's Collection). */
const BOARDS = "tally_ranks";

/**
 * The id of the board of path's collection by field.
 * @param {string} path
 * @param {string} field
 */
export function boardOf(path, field) {
  const i = path.lastIndexOf("/");
  if (i <= 0) throw new Error(`tally: rank: ${path} is not a document's path (collection/id)`);
  return `${path.slice(0, i).replaceAll("/", ":")}:${field}`;
}

/**
 * Asks Increment for the place of the document at path by field.
 * @param {Client} t
 * @param {string} path
 * @param {string} field
 * @returns {Promise<Place>}
 */
export async function askRank(t, path, field) {
  boardOf(path, field);
  /** @type {Record<string, string>} */
  const headers = {};
  if (t.appCheck) headers["X-Firebase-AppCheck"] = (await getToken(t.appCheck)).token;
  const u = new URL(t.url);
  u.searchParams.set("rank", path);
  u.searchParams.set("field", field);
  const res = await fetch(u, { headers, signal: t.life.signal });
  const body = await res.json().catch(() => null);
  if (!res.ok) {
    throw Object.assign(new Error(body?.error ?? `Increment answered ${res.status}`), {
      code: res.status === 404 ? "tally/not-ranked" : "tally/refused", status: res.status,
    });
  }
  return { rank: body.rank, of: body.of, asOf: new Date(body.as_of), reads: body.reads, top: body.of ? (100 * body.rank) / body.of : 0 };
}

/**
 * Follows the place of the document at path by field: its place now,
 * then again each time the board's summary changes (at most once a
 * second), one request at a time, the latest always asked last.
 * @param {Client} t
 * @param {string} path
 * @param {string} field
 * @param {(place: Place) => void} next
 * @param {(e: Error) => void} [error]
 * @returns {() => void}
 */
export function followRank(t, path, field, next, error) {
  let stopped = false;
  let asking = false;
  let again = false;
  let shown = 0;
  const ask = async () => {
    if (asking) {
      again = true;
      return;
    }
    asking = true;
    do {
      again = false;
      try {
        const place = await askRank(t, path, field);
        if (!stopped && place.asOf.getTime() >= shown) {
          shown = place.asOf.getTime();
          next(place);
        }
      } catch (e) {
        if (!stopped && /** @type {any} */ (e).code === "tally/refused") error?.(/** @type {Error} */ (e));
      }
    } while (again && !stopped);
    asking = false;
  };
  const stop = onSnapshot(doc(t.db, BOARDS, boardOf(path, field)), () => void ask(), (e) => error?.(e));
  const unsubscribe = () => {
    stopped = true;
    stop();
    t.stops.delete(unsubscribe);
  };
  t.stops.add(unsubscribe);
  return unsubscribe;
}
