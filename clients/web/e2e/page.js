// The browser tests' page: one count, a button that adds to it with the
// client, and what the page showed when, for the test to read.
import { initializeApp } from "firebase/app";
import { connectAuthEmulator, getAuth } from "firebase/auth";
import { connectFirestoreEmulator, getFirestore } from "firebase/firestore";

import { count, getTally, increment, onCount } from "../src/index.js";

const cfg = JSON.parse(document.getElementById("config").textContent);
const app = initializeApp({ projectId: cfg.project, apiKey: "demo-api-key" });
const db = getFirestore(app);
const [host, port] = cfg.firestore.split(":");
connectFirestoreEmulator(db, host, Number(port));
const auth = getAuth(app);
if (cfg.auth) connectAuthEmulator(auth, `http://${cfg.auth}`, { disableWarnings: true });

const tally = getTally(app, { url: cfg.url, firestore: db, auth });
const ref = cfg.field ? count(tally, cfg.counter, cfg.field) : count(tally, cfg.counter);
const total = document.getElementById("total");
window.shown = []; // every number shown, with when
window.presses = []; // when each press was
window.failures = [];
onCount(ref, (n) => {
  total.textContent = String(n);
  window.shown.push({ n, at: performance.now() });
});
document.getElementById("like").addEventListener("click", () => {
  window.presses.push(performance.now());
  increment(ref, 1).catch((e) => window.failures.push(String(e)));
});
