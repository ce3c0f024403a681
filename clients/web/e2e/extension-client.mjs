// What the e2e clients of the firestore-counter extension's protocol
// share: a Firestore client of their own on the emulator, and the paths
// such a client listens to.
import { initializeApp } from "firebase/app";
import { connectFirestoreEmulator, getFirestore } from "firebase/firestore";

// emulatorClient is a Firestore client of an app of its own, name, on the
// emulator cfg.firestore names, for project cfg.project.
export function emulatorClient(cfg, name) {
  const app = initializeApp({ projectId: cfg.project, apiKey: "demo-api-key" }, name);
  const db = getFirestore(app);
  const [host, port] = cfg.firestore.split(":");
  connectFirestoreEmulator(db, host, Number(port));
  return db;
}

// listened are the paths a client of shard id listens to: the document,
// its own shard, and its four partials (one to four tabs before a prefix
// of its id), as the extension's client reads them.
export function listened(docPath, id) {
  const shards = `${docPath}/_counter_shards_`;
  const paths = [docPath, `${shards}/${id}`];
  for (let n = 1; n <= 4; n++) paths.push(`${shards}/${"\t".repeat(n)}${id.slice(0, 5 - n)}`);
  return paths;
}
