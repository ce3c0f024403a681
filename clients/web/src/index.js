// tally's web client: counts that show the user's own actions at once and
// exactly, online or offline, on the modular Firebase JS SDK.
//
//   const tally = getTally(app, { url: "https://REGION-PROJECT.cloudfunctions.net/tally-increment" });
//   const likes = count(tally, "posts/p1", "likes");
//   onCount(likes, (n) => (likesEl.textContent = n));
//   onVote(likes, (liked) => (button.ariaPressed = liked));
//   button.onclick = () => vote(likes, button.ariaPressed !== "true");

import { getFirestore, doc, onSnapshot } from "firebase/firestore";
import { getAuth, onAuthStateChanged } from "firebase/auth";
import { getToken } from "firebase/app-check";

import { holds, outstanding, pressedOn, shown, votedShown } from "./pending.js";
import { next } from "./retry.js";
import { openStore } from "./store.js";
import { micros } from "./times.js";


/**
 * The client of one deployed Increment, for one Firebase app.
 * @param {import("firebase/app").FirebaseApp} app
 * @param {{url: string, collection?: string, voters?: string, appCheck?: import("firebase/app-check").AppCheck, firestore?: import("firebase/firestore").Firestore, auth?: import("firebase/auth").Auth}} options
 */
export function getTally(app, options) {
  const t = {
    url: options.url,
    collection: options.collection ?? "counters",
    voters: options.voters ?? "voters",
    appCheck: options.appCheck ?? null,
    db: options.firestore ?? getFirestore(app),
    auth: options.auth ?? getAuth(app),
    store: openStore(`tally:${app.name}:${options.url}`),
    actions: [],
    renders: new Set(),
    sending: new Set(),
    voted: new Map(), // the user's stored vote on each count an onVote listens to
    bases: new Map(), // the snapshot each count is shown on
    settled: new Set(), // keys of the actions this page's counts hold
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
  globalThis.addEventListener?.("online", reload);
  t.ready = reload();
  return t;
}

/**
 * A count: with a field, that count of the document at path counter
 * (counts on your documents); without, the counter of that id.
 */
export function count(tally, counter, field) {
  const path = field ? counter : `${tally.collection}/${counter}`;
  return { tally, counter, field: field ?? "", path, name: field || "total" };
}

/**
 * Calls next with the count to show: the count as the listener on its
 * document saw it, plus this user's actions it does not hold yet, at once
 * after each action and never twice. Returns the unsubscribe function.
 */
export function onCount(ref, nextValue, error) {
  const t = ref.tally;
  let base = null; // the snapshot the number is shown on; none before the first
  let held = null; // a later snapshot, waiting for an answer
  let last;
  const render = () => {
    const actions = mine(t, ref);
    if (!base && held && holds(actions)) {
      // A first snapshot, taken while an action is in flight, may or may
      // not hold it: show the snapshot the action was pressed on instead.
      base = pressedOn(actions);
      if (!base) return; // pressed before any snapshot: wait for its answer
    }
    if (!base && !held) return; // nothing to add the actions to yet
    if (held && (!base || !holds(actions))) {
      base = held;
      held = null;
      settle(t, ref, base.asOf);
    }
    t.bases.set(keyOf(ref), base);
    const n = shown(base.value, base.asOf, mine(t, ref));
    if (n !== last) nextValue((last = n));
  };
  const stop = onSnapshot(doc(t.db, ref.path), (snap) => {
    const d = snap.data() ?? {};
    held = { value: Number(d[ref.name] ?? 0), asOf: ref.field ? d._tally?.as_of : d.as_of };
    render();
  }, error);
  t.renders.add(render);
  render();
  return () => (stop(), t.renders.delete(render));
}

/**
 * Calls next with whether the signed-in user's vote counts, from their vote
 * document and their votes not yet answered.
 */
export function onVote(ref, nextVoted, error) {
  const t = ref.tally;
  let stored = false;
  let last;
  let user = null;
  // A count on a document: its votes are kept under the life of the
  // document that the count is of (_tally.life), so that a document
  // created again at the same path has none of its earlier life's. null:
  // no count of it folded yet, so no vote to find.
  let life = ref.field ? null : "";
  let stopVote = () => {};
  const render = () => {
    const v = votedShown(stored, mine(t, ref));
    if (v !== last) nextVoted((last = v));
  };
  const listen = () => {
    stopVote();
    stopVote = () => {};
    stored = false;
    render();
    if (!user || life === null) return;
    const id = ref.field ? `${ref.field}:${user.uid}` : user.uid;
    const home = ref.field ? `${ref.path}/lives/${life}` : ref.path;
    stopVote = onSnapshot(doc(t.db, `${home}/${t.voters}/${id}`), (snap) => {
      stored = snap.exists();
      t.voted.set(keyOf(ref), stored);
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
  return () => (stopAuth(), stopLife(), stopVote(), t.renders.delete(render));
}

/** Adds by to the count; resolves with Increment's answer once it is in. */
export function increment(ref, by = 1) {
  return act(ref, { by });
}

/**
 * Adds the user's vote (true) or takes it back (false): one per user. A
 * vote that is already as asked (as an onVote on ref knows it) sends
 * nothing.
 */
export function vote(ref, on) {
  const stored = ref.tally.voted.get(keyOf(ref));
  if (stored !== undefined && votedShown(stored, mine(ref.tally, ref)) === on) {
    return Promise.resolve({ counter: ref.counter, changed: false });
  }
  return act(ref, { vote: on, by: on ? 1 : -1 });
}

function keyOf(ref) {
  return `${ref.counter}#${ref.field}`;
}

function act(ref, what) {
  const t = ref.tally;
  const base = t.bases.get(keyOf(ref)) ?? null; // taken before a is sent, so without it
  const a = { key: crypto.randomUUID(), counter: ref.counter, field: ref.field, ...what, at: Date.now(), base };
  t.actions.push(a);
  changed(t); // shown now, before anything is written anywhere
  return keep(t, a).then(() => deliver(t, a));
}

// The actions of this user on ref.
function mine(t, ref) {
  return t.actions.filter((a) => a.counter === ref.counter && a.field === ref.field);
}

function changed(t) {
  t.renders.forEach((r) => r());
}

// KEEP_ANSWERED is how long an answered action stays in the store, in
// milliseconds.
const KEEP_ANSWERED = 10 * 60 * 1000;

// merge takes in the actions as the store holds them, written by this page
// or another tab: new ones, and answers. An action gone from the store was
// refused (or answered long ago): it is dropped. One this page's counts
// already hold is not taken in again.
function merge(t, stored) {
  const byKey = new Map(stored.map((a) => [a.key, a]));
  t.actions = t.actions.filter((a) => !a.kept || byKey.has(a.key));
  for (const s of stored) {
    const a = t.actions.find((b) => b.key === s.key);
    if (!a && !t.settled.has(s.key)) t.actions.push({ ...s, kept: true });
    else if (s.done && !a.done) Object.assign(a, { done: true, sent: false, committed: s.committed });
    else if (s.sent && !a.done) a.sent = true;
  }
  changed(t);
}

// keep writes a to the store.
async function keep(t, a) {
  await t.store.put(a);
  a.kept = true;
}

// settle forgets the actions a count as of asOf holds. They stay in the
// store: another tab's count may not hold them yet, and would dip if they
// were gone.
function settle(t, ref, asOf) {
  if (micros(asOf) === null) return;
  const open = new Set(outstanding(mine(t, ref), asOf));
  for (const a of mine(t, ref)) {
    if (a.done && !open.has(a)) {
      t.actions = t.actions.filter((b) => b !== a);
      t.settled.add(a.key);
    }
  }
}

// deliver sends a until Increment answers it for good, with the same
// Idempotency-Key every time, so that it counts once however often it is sent.
async function deliver(t, a) {
  if (t.sending.has(a.key)) return;
  t.sending.add(a.key);
  try {
    let refresh = false;
    for (let attempt = 1; ; attempt++) {
      if (globalThis.navigator?.onLine === false) await online();
      if (a.done) return answered(a); // another tab's try was answered
      let status = 0;
      let body = null;
      let retryAfter = null;
      try {
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
        Object.assign(a, { done: true, sent: false, committed: body?.changed ? body.committed : undefined });
        await keep(t, a);
        changed(t);
        return body;
      }
      if (d.then === "fail") {
        t.actions = t.actions.filter((b) => b !== a);
        await t.store.remove(a.key);
        changed(t); // undone on screen
        throw Object.assign(new Error(body?.error ?? `Increment answered ${status}`), { code: "tally/refused", status });
      }
      refresh = d.then === "refresh";
      a.unsure ||= Boolean(d.unsure);
      a.sent = a.unsure;
      await keep(t, a);
      changed(t);
      if (d.wait) await new Promise((r) => setTimeout(r, d.wait));
    }
  } finally {
    t.sending.delete(a.key);
  }
}

// answered is the answer to an action another tab sent, as that tab kept it.
function answered(a) {
  return { counter: a.counter, ...(a.field && { field: a.field }), changed: Boolean(a.committed), committed: a.committed };
}

function request(a) {
  const r = { counter: a.counter };
  if (a.field) r.field = a.field;
  if (a.vote !== undefined) r.vote = a.vote;
  else r.by = a.by;
  return r;
}

function online() {
  return new Promise((r) => globalThis.addEventListener("online", r, { once: true }));
}
