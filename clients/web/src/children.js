// Children the user writes: a document added to, or removed from, a
// collection that an aggregate counts (a post's comments), shown in the
// count at once and exactly. The write carries a server timestamp, which
// is its commit time; the count holds the child once the part of the
// collection that holds the child's id is folded at or after it.

import { deleteDoc, getDoc, getDocFromCache, serverTimestamp, setDoc, updateDoc } from "firebase/firestore";

import { changed, closed, closedError } from "./client.js";

/**
 * @typedef {import("./client.js").Client} Client
 * @typedef {import("./pending.js").Action} Action
 * @typedef {import("firebase/firestore").DocumentReference} DocumentReference
 */

/**
 * Shows the child action what at once, on the count of key, runs write,
 * which resolves with its commit time, and keeps the action until a
 * snapshot of the count holds it. While the write is in flight, new
 * snapshots wait, as for an action sent to Increment: they may or may not
 * hold it. A failed write is undone on screen. Child actions are not kept
 * in the store: Firestore's own cache keeps the write while offline.
 * @param {Client} t
 * @param {string} key
 * @param {{counter: string, field: string, by: number, child: {source: string, id: string}}} what
 * @param {() => Promise<string>} write
 */
export async function writeChild(t, key, what, write) {
  if (closed(t)) throw closedError();
  /** @type {Action} */
  const a = { key: crypto.randomUUID(), ...what, at: Date.now(), base: t.bases.get(key) ?? null, sent: true };
  t.actions.push(a);
  changed(t);
  try {
    Object.assign(a, { committed: await write(), done: true, sent: false });
  } catch (e) {
    t.actions = t.actions.filter((b) => b !== a);
    throw e;
  } finally {
    changed(t);
  }
}

/**
 * Creates child with data and a server timestamp in stamp; resolves with
 * the commit time.
 * @param {DocumentReference} child
 * @param {Record<string, unknown>} data
 * @param {string} stamp
 */
export async function create(child, data, stamp) {
  await setDoc(child, { ...data, [stamp]: serverTimestamp() });
  return stampOf(child, stamp);
}

/**
 * Deletes child, after writing a server timestamp in stamp: the delete's
 * own commit time is not told to a client, and commits one round trip
 * after the stamp. Resolves with the stamp's time.
 * @param {DocumentReference} child
 * @param {string} stamp
 */
export async function remove(child, stamp) {
  await updateDoc(child, { [stamp]: serverTimestamp() });
  const at = await stampOf(child, stamp);
  await deleteDoc(child);
  return at;
}

/**
 * The server timestamp in field of child, as RFC 3339 with microseconds:
 * from the cache, where the write's answer put it, or else read.
 * @param {DocumentReference} child
 * @param {string} field
 */
async function stampOf(child, field) {
  const cached = await getDocFromCache(child).catch(() => null);
  let ts = cached?.get(field);
  if (!ts?.seconds) ts = (await getDoc(child)).get(field);
  if (!ts?.seconds) throw new Error(`tally: ${child.path} has no ${field} timestamp after it was written`);
  const whole = new Date(ts.seconds * 1000).toISOString().slice(0, 19);
  return `${whole}.${String(ts.nanoseconds).padStart(9, "0")}Z`;
}

/**
 * The aggregate's source that children is: its collection id when it is
 * under the counted document at path, else "/" and its path from the root.
 * @param {string} path
 * @param {import("firebase/firestore").CollectionReference} children
 */
export function sourceOf(path, children) {
  return children.parent?.path === path ? children.id : `/${children.path}`;
}

