// docs/mobile.md end to end, with the Firebase JS SDK standing in for a
// mobile one, reaching serve's stack on the ports it was given (as an iOS
// simulator does): two users sign up on the Auth emulator; the first likes
// a post as a document and comments on it; both view it once an hour over
// HTTPS with an Idempotency-Key, as the page's view() does, the first's
// sent again as a retry would be, and again within the hour; one listener
// on the post waits for every count; then the feed by views today and by
// trend. It prints what it saw as one line of JSON, and each step as it
// goes on stderr (shown if it fails). Run by mobile_integration_test.go
// with MOBILE_CONFIG set.
import { initializeApp } from "firebase/app";
import { connectAuthEmulator, createUserWithEmailAndPassword, getAuth } from "firebase/auth";
import {
  addDoc, collection, connectFirestoreEmulator, disableNetwork, doc, enableNetwork, getDocs, getFirestore, limit, onSnapshot, orderBy, query,
  serverTimestamp, setDoc, terminate,
} from "firebase/firestore";

const cfg = JSON.parse(process.env.MOBILE_CONFIG);
const step = (what) => console.error(`${new Date().toISOString()} ${what}`);

async function user(name) {
  const app = initializeApp({ projectId: cfg.project, apiKey: "demo-api-key" }, name);
  const auth = getAuth(app);
  const [ahost, aport] = cfg.auth.split(":");
  connectAuthEmulator(auth, `http://${ahost}:${aport}`, { disableWarnings: true });
  const db = getFirestore(app);
  const [host, port] = cfg.firestore.split(":");
  connectFirestoreEmulator(db, host, Number(port));
  const { user: u } = await createUserWithEmailAndPassword(auth, `${name}-${Date.now()}@example.com`, "secret-password");
  return { db, u };
}

// send is one try of a view: the answer's status and body.
async function send(u, post, key) {
  const r = await fetch(cfg.url, {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${await u.getIdToken()}`, "Idempotency-Key": key },
    body: JSON.stringify({ counter: post, field: "views", once: "hour" }),
  });
  return { status: r.status, answer: await r.json() };
}

// view is the page's view(): a key per view, the same key for its
// retries, 429 and 503 after Retry-After, 5xx after a backoff.
async function view(u, post, key = crypto.randomUUID()) {
  for (let backoff = 1000; ; backoff = Math.min(backoff * 2, 30000)) {
    const { status, answer } = await send(u, post, key);
    if (status < 300) return answer;
    step(`a view answered ${status} ${JSON.stringify(answer)}`);
    if (status < 500 && status !== 429) throw new Error(answer.error);
    await new Promise((r) => setTimeout(r, backoff));
  }
}

const a = await user("ada"), b = await user("bo");
step("signed up");
await setDoc(doc(a.db, `${cfg.post}/likes/${a.u.uid}`), { at: serverTimestamp() });
await addDoc(collection(a.db, `${cfg.post}/comments`), { text: "Nice", owner: a.u.uid, createdAt: serverTimestamp() });
step("liked and commented");
const key = crypto.randomUUID();
const first = await view(a.u, cfg.post, key);
const retried = await view(a.u, cfg.post, key); // the same view sent again
const again = await view(a.u, cfg.post); // a new view within the hour
await view(b.u, cfg.post);
await view(a.u, cfg.other);
step("viewed");

// The listener waits for every count. The emulator, under load, was seen
// to leave a listen stream open and silent while its document changed:
// after a minute with no snapshot, the app's streams are opened again.
const counts = await new Promise((resolve) => {
  let heard = Date.now();
  const restart = setInterval(async () => {
    if (Date.now() - heard < 60000) return;
    step("no snapshot for a minute: the streams are opened again");
    heard = Date.now();
    await disableNetwork(a.db);
    await enableNetwork(a.db);
  }, 5000);
  const stop = onSnapshot(doc(a.db, cfg.post), (snap) => {
    heard = Date.now();
    const d = snap.data() ?? {};
    step(`the listener sees likes ${d.likes}, comments ${d.comments}, views ${d.views}, views_today ${d.views_today}, hot ${d.hot}`);
    if (d.likes === 1 && d.comments === 1 && d.views === 2 && d.views_today === 2 && d.hot !== undefined) {
      clearInterval(restart);
      stop();
      resolve({ likes: d.likes, comments: d.comments, views: d.views, viewsToday: d.views_today });
    }
  });
});
const first20 = async (field) => (await getDocs(query(collection(a.db, "posts"), orderBy(field, "desc"), limit(20)))).docs.map((d) => d.id);
console.log(JSON.stringify({ first, retried, again, counts, byToday: await first20("views_today"), byHot: await first20("hot") }));
await Promise.all([terminate(a.db), terminate(b.db)]);
process.exit(0);
