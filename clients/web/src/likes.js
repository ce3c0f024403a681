// Likes as documents: a count of one document per user, kept by tally as
// an aggregate of the counted document's collection
// (TALLY_COUNTS='posts:likes=count(likes)'), the user's own like at
// posts/{post}/likes/{uid}. Every client writes the same document with
// its own Firestore SDK (web, Android, iOS, Flutter: docs/mobile.md), so a
// like counts once per user from any device, and is kept while offline.
// like adds or takes back the user's like, shown in the count at once and
// exactly (children.js); onLike says whether it is there.

import { collection, doc, getDoc, getDocFromCache, onSnapshot } from "firebase/firestore";
import { onAuthStateChanged } from "firebase/auth";

import { closed, keyOf, stopping } from "./client.js";
import { create, remove, sourceOf, writeChild } from "./children.js";

/**
 * @typedef {import("../index").CountRef} CountRef
 * @typedef {import("../likes").LikeOptions} LikeOptions
 * @typedef {import("./client.js").Client} Client
 */

/**
 * The collection of the likes ref counts, and the user's document in it.
 * @param {Client} t
 * @param {CountRef} ref
 * @param {LikeOptions} options
 * @param {string} uid
 */
function likeOf(t, ref, options, uid) {
  if (!ref.field) throw new Error(`tally: likes are a count of a document: countRef(tally, "posts/p1", "likes"), not of ${ref.counter}`);
  const likes = options.likes ?? collection(t.db, `${ref.path}/${ref.field}`);
  return { likes, mine: doc(likes, uid) };
}

/**
 * Adds the signed-in user's like (true) or takes it back (false): their
 * document in the collection ref counts (options.likes, or the one named
 * as ref's field, under ref's document), holding only its time, "at".
 * The count shows it at once, and never twice. A like already as asked
 * (as an onLike on ref knows it, or the document says) writes nothing.
 * Rejects, with status 401, when no user is signed in.
 * @param {CountRef} ref
 * @param {boolean} on
 * @param {LikeOptions} [options]
 * @returns {Promise<void>}
 */
export async function like(ref, on, options = {}) {
  const t = /** @type {Client} */ (/** @type {unknown} */ (ref.tally));
  const user = t.auth.currentUser;
  if (!user) throw Object.assign(new Error("tally: sign in to like"), { status: 401 });
  const { likes, mine } = likeOf(t, ref, options, user.uid);
  const known = t.liked.get(`${keyOf(ref)}\n${user.uid}`) ?? (await there(mine));
  if (known === on) return;
  const what = { counter: ref.counter, field: ref.field, by: on ? 1 : -1, child: { source: sourceOf(ref.path, likes), id: mine.id } };
  await writeChild(t, keyOf(ref), what, () => (on ? create(mine, {}, "at") : remove(mine, "at")));
}

/**
 * Whether the document is there: from the cache, where a listener or
 * the user's own write keeps it, or else read.
 * @param {import("firebase/firestore").DocumentReference} d
 */
async function there(d) {
  const cached = await getDocFromCache(d).catch(() => null);
  return cached ? cached.exists() : (await getDoc(d)).exists();
}

/**
 * Calls next with whether the signed-in user likes what ref counts: their
 * like document is there, their own write of it at once, before the
 * server has it (false while no one is signed in). Returns the
 * unsubscribe function.
 * @param {CountRef} ref
 * @param {(liked: boolean) => void} nextLiked
 * @param {(e: import("firebase/firestore").FirestoreError) => void} [error]
 * @param {LikeOptions} [options]
 * @returns {() => void}
 */
export function onLike(ref, nextLiked, error, options = {}) {
  const t = /** @type {Client} */ (/** @type {unknown} */ (ref.tally));
  if (closed(t)) return () => {};
  /** @type {boolean | undefined} */
  let last;
  const show = (/** @type {boolean} */ v) => {
    if (v !== last) nextLiked((last = v));
  };
  let stopMine = () => {};
  const stopAuth = onAuthStateChanged(t.auth, (user) => {
    stopMine();
    stopMine = () => {};
    if (!user) return show(false);
    const { mine } = likeOf(t, ref, options, user.uid);
    const key = `${keyOf(ref)}\n${user.uid}`;
    const stop = onSnapshot(mine, (snap) => {
      t.liked.set(key, snap.exists());
      show(snap.exists());
    }, error);
    stopMine = () => (stop(), t.liked.delete(key));
  });
  return stopping(t, () => (stopAuth(), stopMine()));
}
