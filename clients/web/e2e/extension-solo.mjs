// Clients of the firestore-counter extension's protocol that listen as
// its web client does: one listener each on the document, its own shard
// and its four partials, summed a moment after any of them changes (not
// in sync), the SDK's writes still unanswered applied on top. Each presses
// EXTENSION_SOLO's "each" times, "gap" ms apart, without waiting for an
// answer, as a page does. The emulator it is given may answer its writes
// late. It prints one line of JSON: each client's last view, and the most
// any view was above the increments sent by then.
import { doc, increment, onSnapshot, setDoc, terminate } from "firebase/firestore";

import { emulatorClient, listened } from "./extension-client.mjs";

const cfg = JSON.parse(process.env.EXTENSION_SOLO);
let sent = 0;
let above = 0;
let views = 0;
let slowest = 0; // ms from a write's call to its answer

async function client(i) {
  const db = emulatorClient(cfg, `solo-${i}`);
  const id = crypto.randomUUID();
  const paths = listened(cfg.doc, id);
  const values = new Map(paths.map((p) => [p, 0]));
  const c = { db, view: 0, unsubs: [], scheduled: false };
  for (const p of paths) {
    c.unsubs.push(onSnapshot(doc(db, p), (snap) => {
      values.set(p, snap.get(cfg.field) || 0);
      if (c.scheduled) return;
      c.scheduled = true;
      setTimeout(() => {
        c.scheduled = false;
        c.view = [...values.values()].reduce((a, b) => a + b, 0);
        views++;
        above = Math.max(above, c.view - sent);
      }, 0);
    }));
  }
  c.presses = (async () => {
    for (let k = 0; k < cfg.each; k++) {
      sent++; // counted before its write: the SDK shows a write at once
      const called = Date.now();
      setDoc(doc(db, paths[1]), { [cfg.field]: increment(1) }, { merge: true })
        .then(() => { slowest = Math.max(slowest, Date.now() - called); });
      await new Promise((r) => setTimeout(r, cfg.gap));
    }
  })();
  return c;
}

const clients = await Promise.all(Array.from({ length: cfg.clients }, (_, i) => client(i)));
await Promise.all(clients.map((c) => c.presses));
const want = cfg.clients * cfg.each;
const deadline = Date.now() + 150_000;
while (clients.some((c) => c.view !== want) && Date.now() < deadline) {
  await new Promise((r) => setTimeout(r, 100));
}
const last = clients.map((c) => c.view);
for (const c of clients) {
  c.unsubs.forEach((u) => u());
  await terminate(c.db);
}
console.log(JSON.stringify({ views: last, above, snapshots: views, slowestMS: slowest }));
process.exit(0);
