// tally's web client: counts that show the user's own actions at once and
// exactly, online or offline, on the modular Firebase JS SDK.
//
//   const tally = getTally(app, { url: "https://REGION-PROJECT.cloudfunctions.net/tally-increment" });
//   const likes = countRef(tally, "posts/p1", "likes"); // likes=count(likes)
//   onCount(likes, (n) => (likesEl.textContent = n));
//   onLike(likes, (liked) => (button.ariaPressed = liked)); // @tallycounters/web/likes
//   button.onclick = () => like(likes, button.ariaPressed !== "true");
//
// Its names are not those of firebase/firestore (count, increment,
// terminate), so an app imports both as they are.

import { getFirestore, doc, onSnapshot } from "firebase/firestore";
import { getAuth, onAuthStateChanged } from "firebase/auth";

import { agree, holds, pressedOn, shown, votedShown } from "./pending.js";
import { act, closeClient, closed, keyOf, mine, openClient, settle, stopping } from "./client.js";
import { create, remove, sourceOf, writeChild } from "./children.js";
import { userKey } from "./keys.js";
import { bookOf, windowOf, windowShown } from "./windows.js";

export { seriesOf, trendNow } from "./windows.js";

/**
 * @typedef {import("../index").Tally} Tally
 * @typedef {import("../index").CountRef} CountRef
 * @typedef {import("./client.js").Client} Client
 */

/** @type {WeakMap<import("firebase/app").FirebaseApp, Client>} */
const clients = new WeakMap();

/**
 * The client of one deployed Increment for app: one per app, made by the
 * first call, which gives the options; later calls return it.
 * @param {import("firebase/app").FirebaseApp} app
 * @param {import("../index").TallyOptions} [options]
 * @returns {Tally}
 */
export function getTally(app, options) {
  const have = clients.get(app);
  if (have) {
    if (options && options.url !== have.url) {
      throw new Error(`tally: this app's client sends to ${have.url}, not ${options.url}; closeTally it first`);
    }
    return have;
  }
  if (!options?.url) throw new Error("tally: the first getTally(app, options) needs options.url, Increment's URL");
  const t = openClient(app, { ...options, firestore: options.firestore ?? getFirestore(app), auth: options.auth ?? getAuth(app) });
  clients.set(app, t);
  return t;
}

/**
 * Closes tally: its listeners stop, its sends stop, and the next
 * getTally(app, options) makes a new client. Actions not yet answered stay
 * kept, and the next client sends them.
 * @param {Tally} tally
 * @returns {Promise<void>}
 */
export function closeTally(tally) {
  const t = client(tally);
  if (clients.get(t.app) === t) clients.delete(t.app);
  return closeClient(t);
}

/**
 * A count: with a field, that count of the document at path counter
 * (counts on your documents); without, the counter of that id.
 * @param {Tally} tally
 * @param {string} counter
 * @param {string} [field]
 * @returns {CountRef}
 */
export function countRef(tally, counter, field) {
  const path = field ? counter : `${client(tally).collection}/${counter}`;
  return { tally, counter, field: field ?? "", path };
}

/**
 * Calls next with the count to show: the count as the listener on its
 * document saw it, plus this user's actions it does not hold yet, at once
 * after each action and never twice. A per or over window of a count
 * (countRef(tally, "posts/p1", "likes_today")) shows the actions on that
 * count in it. Returns the unsubscribe function.
 * @param {CountRef} ref
 * @param {(value: number) => void} nextValue
 * @param {(e: import("firebase/firestore").FirestoreError) => void} [error]
 * @returns {() => void}
 */
export function onCount(ref, nextValue, error) {
  const t = client(ref.tally);
  if (closed(t)) return () => {};
  const name = ref.field || "total";
  const onDocs = !guide(t, ref);
  /** @type {{counter: string, field: string}} */
  let counted = ref; // the count whose actions show: a window's, once a snapshot says which
  /** @type {import("./client.js").Base | null} */
  let base = null; // the snapshot the number is shown on; none before the first
  /** @type {import("./client.js").Base | null} */
  let held = null; // a later snapshot, waiting for an answer
  /** @type {number | undefined} */
  let last;
  const render = () => {
    const actions = mine(t, counted);
    if (!base && held && holds(actions)) {
      // A first snapshot, taken while an action is in flight, may or may
      // not hold it: show the snapshot the action was pressed on instead.
      base = pressedOn(actions);
      if (base && held.windows?.[name] && !base.windows?.[name]) base = null; // pressed before the window was folded
      if (!base) return; // pressed before any snapshot: wait for its answer
    }
    if (!base && !held) return; // nothing to add the actions to yet
    if (held && (!base || !holds(actions))) {
      base = held;
      held = null;
      settle(t, counted, base.asOf, base.parts, base.written);
    }
    if (!base) return;
    t.bases.set(keyOf(counted), base);
    const w = base.windows?.[name];
    const n = w ? windowShown(w.value, base.asOf, w.w, mine(t, counted), Date.now()) : shown(base.value, base.asOf, mine(t, counted), base.parts, base.written);
    if (n !== last) nextValue((last = n));
  };
  const stopSnapshots = onSnapshot(doc(t.db, ref.path), (snap) => {
    const d = snap.data() ?? {};
    const book = bookOf(d, onDocs);
    const w = windowOf(book, name);
    if (w) counted = onDocs ? { counter: ref.counter, field: w.c } : { counter: ref.path.slice(t.collection.length + 1), field: "" };
    held = { value: Number(d[w ? w.c : name] ?? 0), asOf: book.as_of, parts: book.parts, written: book.written, windows: windowsIn(d, book) };
    render();
  }, error);
  t.renders.add(render);
  render();
  return stopping(t, () => (stopSnapshots(), t.renders.delete(render)));
}

/**
 * Calls next with whether the signed-in user's vote counts, from their vote
 * document and their votes not yet answered.
 * @param {CountRef} ref
 * @param {(voted: boolean) => void} nextVoted
 * @param {(e: import("firebase/firestore").FirestoreError) => void} [error]
 * @returns {() => void}
 */
export function onVote(ref, nextVoted, error) {
  const t = client(ref.tally);
  if (closed(t)) return () => {};
  let stored = false;
  let seen = false; // stored is from the vote document's snapshot
  /** @type {boolean | undefined} */
  let last;
  /** @type {import("firebase/auth").User | null} */
  let user = null;
  // A count on a document: its votes are kept under the life of the
  // document that the count is of (_tally.life), so that a document
  // created again at the same path has none of its earlier life's. null:
  // no count of it folded yet, so no vote to find.
  /** @type {string | null} */
  let life = ref.field ? null : "";
  let stopVote = () => {};
  const render = () => {
    if (seen) agree(stored, mine(t, ref));
    const v = votedShown(stored, mine(t, ref));
    if (v !== last) nextVoted((last = v));
  };
  const listen = () => {
    stopVote();
    stopVote = () => {};
    stored = seen = false;
    render();
    if (!user || life === null) return;
    const id = ref.field ? `${ref.field}:${userKey(user.uid)}` : userKey(user.uid);
    const home = ref.field ? `${ref.path}/lives/${life}` : ref.path;
    stopVote = onSnapshot(doc(t.db, `${home}/${t.voters}/${id}`), (snap) => {
      stored = snap.exists();
      seen = true;
      t.voted.set(keyOf(ref), stored);
      agree(stored, mine(t, ref), true);
      render();
    }, error);
  };
  const stopLife = ref.field
    ? onSnapshot(doc(t.db, ref.path), (snap) => {
        const l = snap.data()?._tally?.life ?? null;
        if (l !== life) {
          life = l;
          t.voted.delete(keyOf(ref));
          listen();
        }
      }, error)
    : () => {};
  const stopAuth = onAuthStateChanged(t.auth, (u) => {
    user = u;
    listen();
  });
  t.renders.add(render);
  return stopping(t, () => (stopAuth(), stopLife(), stopVote(), t.renders.delete(render)));
}

/**
 * Adds by to the count; resolves with Increment's answer once it is in.
 * With options.once ("minute", "hour", "day", "week" or "month"), the
 * signed-in user's action counts at most once in each bucket of that
 * unit: a repeat is answered changed: false, and leaves the count shown
 * as it was once answered.
 * @param {CountRef} ref
 * @param {number} [by]
 * @param {{once?: "minute" | "hour" | "day" | "week" | "month"}} [options]
 * @returns {Promise<import("../index").Answer>}
 */
export function addTo(ref, by = 1, options = {}) {
  return act(client(ref.tally), keyOf(ref), { counter: ref.counter, field: ref.field, by, ...(options.once && { once: options.once }) });
}

/**
 * Adds the user's vote (true) or takes it back (false): one per user. A
 * vote that is already as asked (as an onVote on ref knows it) sends
 * nothing.
 * @param {CountRef} ref
 * @param {boolean} on
 * @returns {Promise<import("../index").Answer>}
 */
export function vote(ref, on) {
  const t = client(ref.tally);
  const stored = t.voted.get(keyOf(ref));
  if (stored !== undefined && votedShown(stored, mine(t, ref)) === on) {
    return Promise.resolve({ counter: ref.counter, changed: false });
  }
  return act(t, keyOf(ref), { counter: ref.counter, field: ref.field, vote: on, by: on ? 1 : -1 });
}

/**
 * Adds a document with data to children, a collection that the aggregate
 * ref counts (countRef(tally, "posts/p1", "comments"), collection(db,
 * "posts/p1/comments")), with a server timestamp in options.stamp
 * (default "createdAt"), and shows it in ref's count at once: the count
 * adds options.by (default 1) until it holds the new document. Resolves
 * with the new document's reference once written.
 * @param {CountRef} ref
 * @param {import("firebase/firestore").CollectionReference} children
 * @param {Record<string, unknown>} data
 * @param {{stamp?: string, by?: number}} [options]
 * @returns {Promise<import("firebase/firestore").DocumentReference>}
 */
export async function addChild(ref, children, data, options = {}) {
  const child = doc(children);
  const what = { counter: ref.counter, field: ref.field, by: options.by ?? 1, child: { source: sourceOf(ref.path, children), id: child.id } };
  await writeChild(client(ref.tally), keyOf(ref), what, () => create(child, data, options.stamp ?? "createdAt"));
  return child;
}

/**
 * Deletes child, a document that the aggregate ref counts, and shows it
 * gone from ref's count at once: the count adds options.by (default -1)
 * until it no longer holds it. The delete is stamped first with a server
 * timestamp in options.stamp (default "removedAt"), one more write.
 * @param {CountRef} ref
 * @param {import("firebase/firestore").DocumentReference} child
 * @param {{stamp?: string, by?: number}} [options]
 * @returns {Promise<void>}
 */
export function removeChild(ref, child, options = {}) {
  if (!child.parent) throw new Error(`tally: ${child.path} is not in a collection`);
  const what = { counter: ref.counter, field: ref.field, by: options.by ?? -1, child: { source: sourceOf(ref.path, child.parent), id: child.id } };
  return writeChild(client(ref.tally), keyOf(ref), what, () => remove(child, options.stamp ?? "removedAt"));
}

/**
 * The client behind a Tally, which getTally made.
 * @param {Tally} tally
 * @returns {Client}
 */
function client(tally) {
  return /** @type {Client} */ (tally);
}

/**
 * Whether ref is a window of a counter of the guide layout
 * (countRef(tally, "counters/hits", "today")), whose bookkeeping is the
 * document itself, not its _tally.
 * @param {Client} t
 * @param {CountRef} ref
 */
function guide(t, ref) {
  return !ref.field || (ref.path.startsWith(`${t.collection}/`) && ref.path.split("/").length === 2);
}

/**
 * The per and over windows of a document's data, with their values.
 * @param {Record<string, any>} data
 * @param {Record<string, any>} book its bookkeeping
 * @returns {Record<string, {value: number, w: import("./windows.js").WindowState}>}
 */
function windowsIn(data, book) {
  /** @type {Record<string, {value: number, w: import("./windows.js").WindowState}>} */
  const out = {};
  for (const f of Object.keys(book.windows ?? {})) {
    const w = windowOf(book, f);
    if (w) out[f] = { value: Number(data[f] ?? 0), w };
  }
  return out;
}
