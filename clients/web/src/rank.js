// A document's place among its collection's, by a field tally ranks
// (declared rank(field) in TALLY_COUNTS): "#12 of 85,310". An entry of its
// own, @tallycounters/web/rank, so that a page without ranks does not
// carry it:
//
//   import { onRank } from "@tallycounters/web/rank";
//   onRank(tally, "posts/p1", "likes", (p) => (placeEl.textContent = `#${p.rank} of ${p.of}`));
// A page cannot
// read Firestore at a past read time, which an exact place needs, so
// Increment answers it (GET ?rank=): two or three reads on the server,
// exact at the time it reports. onRank follows the board's summary, one
// document that tally writes at most once a second, and asks again each
// time it changes: the page never reads the collection.

import { getToken } from "firebase/app-check";
import { doc, onSnapshot } from "firebase/firestore";

/**
 * @typedef {import("./client.js").Client} Client
 * @typedef {import("../rank").Place} Place
 * @typedef {import("../rank").Standing} Standing
 * @typedef {import("../index").Tally} Tally
 */

/** The collection of boards' summaries (package rank's Collection). */
const BOARDS = "tally_ranks";

/**
 * The id of the board of path's collection by field.
 * @param {string} path
 * @param {string} field
 */
function boardOf(path, field) {
  const i = path.lastIndexOf("/");
  if (i <= 0) throw new Error(`tally: rank: ${path} is not a document's path (collection/id)`);
  return `${path.slice(0, i).replaceAll("/", ":")}:${field}`;
}

/**
 * Asks Increment (GET ?rank=) for the answer to query, with the App Check
 * token if the client has App Check on.
 * @param {Client} t
 * @param {Record<string, string>} query
 */
async function ask(t, query) {
  /** @type {Record<string, string>} */
  const headers = {};
  if (t.appCheck) headers["X-Firebase-AppCheck"] = (await getToken(t.appCheck)).token;
  const u = new URL(t.url, globalThis.location?.href); // a page may give Increment's path alone
  for (const [k, v] of Object.entries(query)) u.searchParams.set(k, v);
  const res = await fetch(u, { headers, signal: t.life.signal });
  const body = await res.json().catch(() => null);
  if (!res.ok) {
    throw Object.assign(new Error(body?.error ?? `Increment answered ${res.status}`), {
      code: res.status === 404 && query.value === undefined && query.board === undefined ? "tally/not-ranked" : "tally/refused", status: res.status,
    });
  }
  return body;
}

/**
 * Where value stands among collection's documents by field (declared
 * rank(field)), from the board's summary alone: one Firestore read on the
 * server, exact at asOf. A document of that value would be ranked rank,
 * or, where its range of values holds others, anywhere down to rankAtMost;
 * top is the percentile of rankAtMost ("top 3%").
 * @param {Tally} tally
 * @param {string} collection
 * @param {string} field
 * @param {number} value
 * @returns {Promise<Standing>}
 */
export async function standingOf(tally, collection, field, value) {
  const b = await ask(/** @type {Client} */ (tally), { rank: collection, field, value: String(value) });
  return { rank: b.rank, rankAtMost: b.rank_at_most, of: b.of, top: b.top, asOf: new Date(b.as_of), reads: b.reads };
}

/**
 * A page of collection's documents by field (declared rank(field)): those
 * at places offset + 1 to offset + limit (limit 1 to 100, 20 unless
 * given), each with its place (ties share one), exact at asOf, from
 * Increment (GET ?board=). It costs the board's summary, the page's
 * documents and those of its range of values above it, a Firestore read
 * each, on the server. A page past the end is empty.
 * @param {Tally} tally
 * @param {string} collection
 * @param {string} field
 * @param {{offset?: number, limit?: number}} [page]
 * @returns {Promise<import("../rank").BoardPage>}
 */
export async function boardPage(tally, collection, field, { offset = 0, limit = 20 } = {}) {
  const b = await ask(/** @type {Client} */ (tally), { board: collection, field, offset: String(offset), limit: String(limit) });
  return {
    documents: b.documents.map((/** @type {{document: string, value: number | string, rank: number}} */ d) => ({ document: d.document, value: Number(d.value), rank: d.rank })),
    of: b.of, asOf: new Date(b.as_of), reads: b.reads,
  };
}

/**
 * The place of the document at path among its collection's by field, which
 * TALLY_COUNTS ranks (posts:likes,rank(likes)): {rank, of, asOf, reads,
 * top}, exact at asOf, from Increment (GET ?rank=), two or three
 * Firestore reads on the server. Rejects with code "tally/not-ranked" for
 * a document not on the board yet.
 * @param {Tally} tally
 * @param {string} path
 * @param {string} field
 * @returns {Promise<Place>}
 */
export async function rankOf(tally, path, field) {
  boardOf(path, field);
  const body = await ask(/** @type {Client} */ (tally), { rank: path, field });
  return { rank: body.rank, of: body.of, asOf: new Date(body.as_of), reads: body.reads, top: body.of ? (100 * body.rank) / body.of : 0 };
}

/**
 * Calls next with the place of the document at path by field, and again
 * each time it may have changed: it listens to the board's summary (one
 * document, written at most once a second), and asks Increment for the
 * place each time it changes, one request at a time, never reading the
 * collection. Returns the unsubscribe function.
 * @param {Tally} tally
 * @param {string} path
 * @param {string} field
 * @param {(place: Place) => void} next
 * @param {(e: Error) => void} [error]
 * @returns {() => void}
 */
export function onRank(tally, path, field, next, error) {
  const t = /** @type {Client} */ (tally);
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
        const place = await rankOf(t, path, field);
        if (!stopped && place.asOf.getTime() >= shown) {
          shown = place.asOf.getTime();
          next(place);
        }
      } catch (e) {
        // A document not on the board yet is on it at a later change; a
        // request cut off is the client closing.
        const err = /** @type {any} */ (e);
        if (!stopped && err.code !== "tally/not-ranked" && err.name !== "AbortError") error?.(/** @type {Error} */ (e));
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
