// A like as a document, from two devices of one user, with the Firebase JS
// SDK standing in for a mobile one: device A likes while offline (the SDK
// queues the write and shows it at once), then comes back online; device
// B, signed in as the same user, likes the same post; and B's write of a
// like for another user is refused by the rules. It prints what it saw as
// one line of JSON. Run by likedocs_test.go with LIKE_CONFIG set.
import { initializeApp } from "firebase/app";
import { connectAuthEmulator, getAuth, signInWithEmailAndPassword } from "firebase/auth";
import {
  connectFirestoreEmulator, disableNetwork, doc, enableNetwork, getFirestore, onSnapshot, serverTimestamp, setDoc, terminate,
} from "firebase/firestore";

const cfg = JSON.parse(process.env.LIKE_CONFIG);

async function device(name) {
  const app = initializeApp({ projectId: cfg.project, apiKey: "demo-api-key" }, name);
  const auth = getAuth(app);
  connectAuthEmulator(auth, `http://${cfg.auth}`, { disableWarnings: true });
  const db = getFirestore(app);
  const [host, port] = cfg.firestore.split(":");
  connectFirestoreEmulator(db, host, Number(port));
  const { user } = await signInWithEmailAndPassword(auth, cfg.email, cfg.password);
  return { db, uid: user.uid };
}

const a = await device("a");
const like = doc(a.db, `${cfg.post}/likes/${a.uid}`);
await disableNetwork(a.db);
const shown = new Promise((resolve) => {
  const stop = onSnapshot(like, (snap) => {
    if (snap.exists() && snap.metadata.hasPendingWrites) {
      stop();
      resolve(true);
    }
  });
});
const written = setDoc(like, { at: serverTimestamp() }); // queued: it resolves once the server has it
const shownOffline = await shown;
await enableNetwork(a.db);
await written;

const b = await device("b");
await setDoc(doc(b.db, `${cfg.post}/likes/${b.uid}`), { at: serverTimestamp() });
let refused = "";
try {
  await setDoc(doc(b.db, `${cfg.post}/likes/someone-else`), { at: serverTimestamp() });
} catch (e) {
  refused = e.code;
}
console.log(JSON.stringify({ shownOffline, sameUser: a.uid === b.uid, uid: a.uid, refused }));
await Promise.all([terminate(a.db), terminate(b.db)]);
process.exit(0);
