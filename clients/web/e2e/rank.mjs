// The web client's ranks, in Node against the local stack: rankOf of each
// post, a page of the board and one past its end, a post not on the board, and onRank of a post liked until it
// leads. It prints what it saw as one line of JSON. Run by
// rank_integration_test.go with RANK_CONFIG set.
import { initializeApp } from "firebase/app";
import { connectFirestoreEmulator, getFirestore } from "firebase/firestore";

import { addTo, closeTally, countRef, getTally } from "../src/index.js";
import { boardPage, onRank, rankOf, standingOf } from "../src/rank.js";

const cfg = JSON.parse(process.env.RANK_CONFIG);
const app = initializeApp({ projectId: cfg.project, apiKey: "demo-api-key" });
const db = getFirestore(app);
const [host, port] = cfg.firestore.split(":");
connectFirestoreEmulator(db, host, Number(port));
const tally = getTally(app, { url: cfg.url, firestore: db });

const places = {};
for (const p of cfg.posts) places[p] = await rankOf(tally, p, "likes");
const standings = {};
for (const v of cfg.values) standings[v] = await standingOf(tally, cfg.collection, "likes", v);
const page = await boardPage(tally, cfg.collection, "likes", { offset: 1, limit: 3 });
const pastEnd = await boardPage(tally, cfg.collection, "likes", { offset: cfg.posts.length });
let notRanked = "";
try {
  await rankOf(tally, cfg.unranked, "likes");
} catch (e) {
  notRanked = e.code;
}
const seen = [];
let first;
const shown = new Promise((resolve) => (first = resolve));
const led = new Promise((resolve) => {
  const stop = onRank(tally, cfg.climber, "likes", (place) => {
    seen.push(place);
    first();
    if (place.rank === 1) {
      stop();
      resolve();
    }
  });
});
await shown; // its place before any like
const likes = countRef(tally, cfg.climber, "likes");
for (let i = 0; i < cfg.climb; i++) await addTo(likes, 1);
await led;
await closeTally(tally);
console.log(JSON.stringify({ places, standings, page, pastEnd, notRanked, seen }));
process.exit(0);
