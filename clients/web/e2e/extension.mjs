// Clients of the firestore-counter extension's protocol, with the Firebase
// JS SDK standing in for the extension's own clients (whose code is not
// this project's): each picks a random shard id once, adds to its own
// shard of the document with a merge-set of increment(), a counter's
// dotted field written as nested maps, and shows the document's field plus
// its shard's and its partials' (D/_counter_shards_/ and one to four tabs
// before a prefix of its id), summed over one listener each, in sync, as
// the extension's client does. EXTENSION_CONFIG names the emulator, the
// document, the clients, their increments each and the fields. It prints
// one line of JSON: each client's last view of each field, the most any
// view the server confirmed (no write of the client's pending in it) was
// above the increments sent, the most any view was (a press of its own
// the SDK still shows as pending, though the server already moved it into
// the document: a moment's double, until the SDK hears the press
// answered), and the snapshots seen.
import { doc, increment, onSnapshot, onSnapshotsInSync, setDoc, terminate } from "firebase/firestore";

import { emulatorClient, listened } from "./extension-client.mjs";

const cfg = JSON.parse(process.env.EXTENSION_CONFIG);

// nested is { a: { b: v } } for the field "a.b".
function nested(field, v) {
  return field.split(".").reduceRight((inner, name) => ({ [name]: inner }), v);
}

// get reads the field "a.b" of a snapshot's data, as a number.
function get(data, field) {
  const v = field.split(".").reduce((m, name) => (m == null ? undefined : m[name]), data);
  return typeof v === "number" ? v : 0;
}

let sent = 0;
let above = 0; // of views the server confirmed
let aboveShown = 0; // of every view
let snapshots = 0;

async function client(i) {
  const db = emulatorClient(cfg, `client-${i}`);
  const id = crypto.randomUUID();
  const paths = listened(cfg.doc, id);
  const held = new Map(paths.map((p) => [p, {}]));
  const pending = new Map(paths.map((p) => [p, false]));
  const view = {};
  const unsubs = paths.map((p) => onSnapshot(doc(db, p), { includeMetadataChanges: true }, (snap) => {
    held.set(p, snap.data() ?? {});
    pending.set(p, snap.metadata.hasPendingWrites);
  }));
  // The extension's client sums its listeners' values once they are in
  // sync; the SDK raises them together at each consistent snapshot.
  unsubs.push(onSnapshotsInSync(db, () => {
    snapshots++;
    const confirmed = ![...pending.values()].some(Boolean);
    for (const f of cfg.fields) {
      view[f] = [...held.values()].reduce((sum, data) => sum + get(data, f), 0);
      aboveShown = Math.max(aboveShown, view[f] - sent);
      if (confirmed) above = Math.max(above, view[f] - sent);
    }
  }));
  for (let k = 0; k < cfg.each; k++) {
    sent++; // sent before its write: the SDK shows a write at once
    for (const f of cfg.fields) {
      await setDoc(doc(db, paths[1]), nested(f, increment(1)), { merge: true });
    }
  }
  return { db, unsubs, view };
}

const clients = await Promise.all(Array.from({ length: cfg.clients }, (_, i) => client(i)));
const want = cfg.clients * cfg.each;
// Wait until every client shows every increment, as tally moves the
// shards into the document.
const deadline = Date.now() + 60_000;
while (clients.some((c) => cfg.fields.some((f) => c.view[f] !== want)) && Date.now() < deadline) {
  await new Promise((r) => setTimeout(r, 100));
}
const views = clients.map((c) => ({ ...c.view }));
for (const c of clients) {
  c.unsubs.forEach((u) => u());
  await terminate(c.db);
}
console.log(JSON.stringify({ views, above, aboveShown, snapshots }));
process.exit(0);
