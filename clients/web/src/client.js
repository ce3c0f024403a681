// One client per Firebase app: the user's actions, kept in the store and
// sent until Increment answers each for good, and the counts on screen
// that show them.

import { getToken } from "firebase/app-check";

import { outstanding } from "./pending.js";
import { next } from "./retry.js";
import { openStore } from "./store.js";
import { micros } from "./times.js";

/**
 * @typedef {import("./pending.js").Action} Action
 * @typedef {{value: number, asOf: *, parts?: *, written?: *, windows?: Record<string, {value: number, w: import("./windows.js").WindowState}>}} Base
 *   the snapshot a count is shown on: its value, as_of, _tally.parts,
 *   _tally.written, and its document's windows with their values
 */

/**
 * @typedef {object} Client
 * @property {import("firebase/app").FirebaseApp} app
 * @property {string} url
 * @property {string} collection
 * @property {string} voters
 * @property {import("firebase/app-check").AppCheck | null} appCheck
 * @property {import("firebase/firestore").Firestore} db
 * @property {import("firebase/auth").Auth} auth
 * @property {import("./store.js").Store} store
 * @property {Action[]} actions this user's, until the counts hold them
 * @property {Set<() => void>} renders of the counts and votes on screen
 * @property {Set<() => void>} stops the unsubscribes of every listener, for closeClient
 * @property {Set<string>} sending keys of the actions this page is sending
 * @property {Map<string, boolean>} voted the user's stored vote on each count an onVote listens to
 * @property {Map<string, boolean>} liked whether the user's like document is there, on each count an onLike listens to, by count and user
 * @property {Map<string, Base>} bases the snapshot each count is shown on
 * @property {Set<string>} settled keys of the actions this page's counts hold
 * @property {AbortController} life aborted when the client is closed
 * @property {Promise<void>} ready
 */

/**
 * A client for app, sending to Increment at options.url.
 * @param {import("firebase/app").FirebaseApp} app
 * @param {import("../index").TallyOptions & {firestore: import("firebase/firestore").Firestore, auth: import("firebase/auth").Auth}} options
 * @returns {Client}
 */
export function openClient(app, options) {
  /** @type {Client} */
  const t = {
    app,
    url: options.url,
    collection: options.collection ?? "counters",
    voters: options.voters ?? "voters",
    appCheck: options.appCheck ?? null,
    db: options.firestore,
    auth: options.auth,
    store: openStore(`tally:${app.name}:${options.url}`),
    actions: [],
    renders: new Set(),
    stops: new Set(),
    sending: new Set(),
    voted: new Map(),
    liked: new Map(),
    bases: new Map(),
    settled: new Set(),
    life: new AbortController(),
    ready: Promise.resolve(),
  };
  const reload = async () => {
    const all = await t.store.all();
    // Answered actions stay in the store for the other tabs, whose counts
    // may hold them later than this page's; past KEEP_ANSWERED, every
    // count holds them.
    const old = all.filter((a) => a.done && a.at < Date.now() - KEEP_ANSWERED);
    await Promise.all(old.map((a) => t.store.remove(a.key)));
    merge(t, all.filter((a) => !old.includes(a)));
    t.actions.filter((a) => !a.done).forEach((a) => deliver(t, a).catch(() => {}));
  };
  t.store.onChange(() => t.store.all().then((all) => merge(t, all)));
  globalThis.addEventListener?.("online", reload, { signal: t.life.signal });
  t.ready = reload();
  return t;
}

/**
 * Closes t: its listeners stop, its sends stop after the request in
 * flight, and its store closes. Actions not yet answered stay kept: the
 * next client of the app sends them.
 * @param {Client} t
 */
export async function closeClient(t) {
  if (t.life.signal.aborted) return;
  t.life.abort();
  t.stops.forEach((stop) => stop());
  await t.ready.catch(() => {});
  await t.store.close();
}

/** @param {Client} t */
export function closed(t) {
  return t.life.signal.aborted;
}

/** The error of an action on a closed client. */
export function closedError() {
  return Object.assign(new Error("tally: closed; an action not yet answered is kept, and sent by the next client"), { code: "tally/closed" });
}

/**
 * Adds the action what on a count, shows it at once, keeps it, and sends it
 * until Increment answers it for good.
 * @param {Client} t
 * @param {string} key the count's (keyOf)
 * @param {{counter: string, field: string, by: number, vote?: boolean, once?: string}} what
 */
export function act(t, key, what) {
  if (closed(t)) return Promise.reject(closedError());
  const base = t.bases.get(key) ?? null; // taken before a is sent, so without it
  /** @type {Action} */
  const a = { key: crypto.randomUUID(), ...what, at: Date.now(), base };
  t.actions.push(a);
  changed(t); // shown now, before anything is written anywhere
  return keep(t, a).then(() => deliver(t, a));
}

/**
 * The actions of this user on the count of counter and field.
 * @param {Client} t
 * @param {{counter: string, field: string}} ref
 */
export function mine(t, ref) {
  return t.actions.filter((a) => a.counter === ref.counter && a.field === ref.field);
}

/** @param {Client} t */
export function changed(t) {
  t.renders.forEach((r) => r());
}

// KEEP_ANSWERED is how long an answered action stays in the store, in
// milliseconds.
const KEEP_ANSWERED = 10 * 60 * 1000;

/**
 * Takes in the actions as the store holds them, written by this page or
 * another tab: new ones, and answers. An action gone from the store was
 * refused (or answered long ago): it is dropped. One this page's counts
 * already hold is not taken in again.
 * @param {Client} t
 * @param {Action[]} stored
 */
function merge(t, stored) {
  const byKey = new Map(stored.map((a) => [a.key, a]));
  t.actions = t.actions.filter((a) => !a.kept || byKey.has(a.key));
  for (const s of stored) {
    const a = t.actions.find((b) => b.key === s.key);
    if (!a) {
      if (!t.settled.has(s.key)) t.actions.push({ ...s, kept: true });
    } else if (s.done && !a.done) Object.assign(a, { done: true, sent: false, committed: s.committed, inDocument: s.inDocument });
    else if (s.sent && !a.done) a.sent = true;
  }
  changed(t);
}

/**
 * Writes a to the store.
 * @param {Client} t
 * @param {Action} a
 */
async function keep(t, a) {
  if (closed(t)) return;
  await t.store.put(a);
  a.kept = true;
}

/**
 * The key of a count in a client's maps: its counter and field.
 * @param {{counter: string, field?: string}} ref
 */
export function keyOf(ref) {
  return `${ref.counter}#${ref.field}`;
}

/**
 * Forgets the actions on ref that a count as of asOf holds. They stay in
 * the store: another tab's count may not hold them yet, and would dip if
 * they were gone.
 * @param {Client} t
 * @param {{counter: string, field: string}} ref
 * @param {*} asOf
 * @param {*} [parts] its document's _tally.parts
 * @param {*} [written] its document's _tally.written
 */
export function settle(t, ref, asOf, parts, written) {
  if (micros(asOf) === null && !parts && micros(written) === null) return;
  const open = new Set(outstanding(mine(t, ref), asOf, parts, written));
  for (const a of mine(t, ref)) {
    if (!a.done || open.has(a)) continue;
    if (a.vote !== undefined && !a.agreed && t.voted.has(keyOf(ref))) {
      a.held = true; // shown as voted until the vote document is seen: it may come after the count
      continue;
    }
    t.actions = t.actions.filter((b) => b !== a);
    t.settled.add(a.key);
  }
}

/**
 * Sends a until Increment answers it for good, with the same
 * Idempotency-Key every time, so that it counts once however often it is
 * sent.
 * @param {Client} t
 * @param {Action} a
 * @returns {Promise<import("../index").Answer>}
 */
async function deliver(t, a) {
  if (t.sending.has(a.key)) return /** @type {any} */ (undefined); // being sent already
  t.sending.add(a.key);
  try {
    let refresh = false;
    for (let attempt = 1; ; attempt++) {
      if (globalThis.navigator?.onLine === false) await online(t.life.signal);
      if (a.done) return answered(a); // another tab's try was answered
      if (closed(t)) throw closedError();
      let status = 0;
      let body = null;
      let retryAfter = null;
      try {
        /** @type {Record<string, string>} */
        const headers = { "Content-Type": "application/json", "Idempotency-Key": a.key };
        await t.auth.authStateReady?.();
        const user = t.auth.currentUser;
        if (user) headers.Authorization = `Bearer ${await user.getIdToken(refresh)}`;
        if (t.appCheck) headers["X-Firebase-AppCheck"] = (await getToken(t.appCheck)).token;
        a.sent = true; // from here the count may hold it: snapshots wait for the answer, in every tab
        await keep(t, a);
        changed(t);
        const res = await fetch(t.url, { method: "POST", headers, body: JSON.stringify(request(a)) });
        status = res.status;
        retryAfter = res.headers.get("Retry-After");
        body = await res.json().catch(() => null);
      } catch {
        status = 0; // offline, or the connection was lost: it may have been applied
      }
      const d = next(status, retryAfter, attempt);
      if (d.then === "done") {
        Object.assign(a, { done: true, sent: false, committed: body?.changed ? body.committed : undefined, inDocument: Boolean(body?.changed && body.in_document) });
        await keep(t, a);
        changed(t);
        return body;
      }
      if (d.then === "fail") {
        t.actions = t.actions.filter((b) => b !== a);
        if (!closed(t)) await t.store.remove(a.key);
        changed(t); // undone on screen
        throw Object.assign(new Error(body?.error ?? `Increment answered ${status}`), { code: "tally/refused", status });
      }
      refresh = d.then === "refresh";
      a.unsure ||= Boolean(d.unsure);
      a.sent = a.unsure;
      await keep(t, a);
      changed(t);
      if (d.wait) await sleep(d.wait, t.life.signal);
    }
  } finally {
    t.sending.delete(a.key);
  }
}

/**
 * The answer to an action another tab sent, as that tab kept it.
 * @param {Action} a
 * @returns {import("../index").Answer}
 */
function answered(a) {
  return { counter: a.counter, ...(a.field && { field: a.field }), changed: Boolean(a.committed), committed: a.committed, ...(a.inDocument && { in_document: true }) };
}

/** @param {Action} a */
function request(a) {
  /** @type {{counter: string, field?: string, vote?: boolean, by?: number, once?: string}} */
  const r = { counter: a.counter };
  if (a.field) r.field = a.field;
  if (a.vote !== undefined) r.vote = a.vote;
  else r.by = a.by;
  if (a.once) r.once = a.once;
  return r;
}

/**
 * Resolves when the browser is online again, or the client closes.
 * @param {AbortSignal} signal
 * @returns {Promise<void>}
 */
function online(signal) {
  return new Promise((r) => {
    globalThis.addEventListener("online", () => r(), { once: true, signal });
    signal.addEventListener("abort", () => r(), { once: true });
  });
}

/**
 * Resolves after ms milliseconds, or when the client closes.
 * @param {number} ms
 * @param {AbortSignal} signal
 * @returns {Promise<void>}
 */
function sleep(ms, signal) {
  return new Promise((r) => {
    const id = setTimeout(r, ms);
    signal.addEventListener("abort", () => (clearTimeout(id), r()), { once: true });
  });
}

/**
 * Registers stop with t, so that closing t stops it, and returns the
 * unsubscribe function that stops it once.
 * @param {Client} t
 * @param {() => void} stop
 */
export function stopping(t, stop) {
  const once = () => {
    if (t.stops.delete(once)) stop();
  };
  t.stops.add(once);
  return once;
}
