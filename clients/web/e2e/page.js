// The browser tests' page: one count and a button that adds to it with the
// client (or, with config.vote, votes and takes the vote back; with
// config.like, likes as a document and unlikes), signed in when the
// config names a user, with App Check when it gives a token; and what the
// page showed when, for the test to read.
import { initializeApp } from "firebase/app";
import { CustomProvider, initializeAppCheck } from "firebase/app-check";
import { connectAuthEmulator, getAuth, signInWithEmailAndPassword } from "firebase/auth";
import { collection, connectFirestoreEmulator, doc, getFirestore, onSnapshot } from "firebase/firestore";

import { addChild, addTo, closeTally, countRef, getTally, onCount, onVote, removeChild, vote } from "../src/index.js";
import { like, onLike } from "../src/likes.js";

const cfg = JSON.parse(document.getElementById("config").textContent);
const app = initializeApp({ projectId: cfg.project, apiKey: "demo-api-key", appId: "1:123456789:web:0a1b2c" });
const db = getFirestore(app);
const [host, port] = cfg.firestore.split(":");
connectFirestoreEmulator(db, host, Number(port));
const auth = getAuth(app);
if (cfg.auth) connectAuthEmulator(auth, `http://${cfg.auth}`, { disableWarnings: true });
const appCheck = cfg.appCheckToken
  ? initializeAppCheck(app, {
      provider: new CustomProvider({ getToken: async () => ({ token: cfg.appCheckToken, expireTimeMillis: Date.now() + 3600e3 }) }),
      isTokenAutoRefreshEnabled: false,
    })
  : undefined;

const $ = (id) => document.getElementById(id);
window.auth = auth;
window.shown = []; // every number shown, with when
window.presses = []; // when each press was
window.failures = [];
await auth.authStateReady();
if (cfg.email && !auth.currentUser) await signInWithEmailAndPassword(auth, cfg.email, cfg.password);

const tally = getTally(app, { url: cfg.url, firestore: db, auth, appCheck });
const ref = cfg.field ? countRef(tally, cfg.counter, cfg.field) : countRef(tally, cfg.counter);
window.snapshots = 0; // of the count's document: as many reads (the SDK shares one listen target)
onSnapshot(doc(db, ref.path), (snap) => {
  window.snapshots++;
  window.stored = snap.data()?.[cfg.field || "total"]; // the count as the document holds it
});
// With config.children, the collection an aggregate counts: add and remove
// children with the client's helpers.
if (cfg.children) {
  window.addChild = async () => (await addChild(ref, collection(db, `${ref.path}/${cfg.children}`), { text: "hi", owner: auth.currentUser?.uid })).id;
  window.removeChild = (id) => removeChild(ref, doc(db, `${ref.path}/${cfg.children}/${id}`));
}
onCount(ref, (n) => {
  $("total").textContent = String(n);
  window.shown.push({ n, at: performance.now() });
});
let liked = false;
if (cfg.vote) {
  onVote(ref, (v) => {
    liked = v;
    $("like").setAttribute("aria-pressed", String(v));
  });
}
if (cfg.like) {
  onLike(ref, (v) => {
    liked = v;
    window.liked = v;
    $("like").setAttribute("aria-pressed", String(v));
  }, (e) => window.failures.push(String(e)));
  window.likeAgain = () => like(ref, true); // a like as asked already, when liked
}
$("like").addEventListener("click", () => {
  window.presses.push(performance.now());
  $("message").textContent = "";
  (cfg.like ? like(ref, !liked) : cfg.vote ? vote(ref, !liked) : addTo(ref, 1)).catch((e) => {
    window.failures.push(String(e));
    $("message").textContent = e.message;
  });
});

// teardown closes the client, checks what closing it did, and shows the
// count again, in #again, with the app's next client.
window.teardown = async () => {
  await closeTally(tally);
  // Its IndexedDB connection is closed: deleting its database (named as
  // the client names it) is not blocked.
  const blocked = await new Promise((resolve) => {
    const req = indexedDB.deleteDatabase(`tally:${app.name}:${cfg.url}`);
    req.onblocked = () => resolve(true);
    req.onsuccess = () => resolve(false);
    req.onerror = () => resolve(true);
  });
  const refused = await addTo(ref, 1).then(() => "", (e) => e.code);
  const again = getTally(app, { url: cfg.url, firestore: db, auth, appCheck });
  const el = document.body.appendChild(document.createElement("span"));
  el.id = "again";
  onCount(countRef(again, cfg.counter), (n) => (el.textContent = String(n)));
  return { blocked, refused, fresh: again !== tally, same: getTally(app) === again };
};
window.ready = true;
