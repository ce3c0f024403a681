// A like button on tally: the count, read from the post and listened to;
// the user's own like a document of theirs, posts/{post}/likes/{uid}, as a
// phone writes it too: shown at once, counted once, kept while offline; a
// second press takes it back. Signed-in users only, as the rules say.
import { initializeApp } from "firebase/app";
import { initializeAppCheck, ReCaptchaEnterpriseProvider } from "firebase/app-check";
import { connectAuthEmulator, getAuth, onAuthStateChanged, signOut } from "firebase/auth";
import { connectFirestoreEmulator, doc, getDoc, getFirestore, setDoc } from "firebase/firestore";
import { countRef, getTally, onCount } from "@tallycounters/web";
import { like, onLike } from "@tallycounters/web/likes";

import { post, production } from "./config.js";
import { wireSignIn } from "./signin.js";

const $ = (id) => document.getElementById(id);

// local is the local stack's settings when tally serve serves this page.
async function local() {
  if (!["127.0.0.1", "localhost"].includes(location.hostname)) return null;
  const resp = await fetch("/__/tally/local.json");
  return resp.ok ? resp.json() : null;
}

const stack = await local();
const app = initializeApp(stack ? { projectId: stack.project, apiKey: "demo-api-key" } : production.firebaseConfig);
const db = getFirestore(app);
const auth = getAuth(app);
let appCheck;
if (stack) {
  const [host, port] = stack.firestoreHost.split(":");
  connectFirestoreEmulator(db, host, Number(port));
  connectAuthEmulator(auth, `http://${stack.authHost}`, { disableWarnings: true });
} else {
  appCheck = initializeAppCheck(app, { provider: new ReCaptchaEnterpriseProvider(production.siteKey), isTokenAutoRefreshEnabled: true });
}
const tally = getTally(app, { url: stack ? stack.url : production.url, firestore: db, auth, appCheck });

const likes = countRef(tally, post, "likes");
const button = $("like");
let user = null;
let posted = !stack; // the post is there to like (below)

// tell shows a message under the button: an error (kind "error") stands
// out from what is only said ("info"), and is read out at once.
function tell(message, kind) {
  const el = $("message");
  el.textContent = message;
  el.dataset.kind = kind;
  el.setAttribute("role", kind === "error" ? "alert" : "status");
}

function show() {
  const liked = button.getAttribute("aria-pressed") === "true";
  button.disabled = !user || !posted;
  button.textContent = !user ? "Sign in to like" : liked ? "Liked" : "Like";
}

onCount(likes, (n) => {
  $("count").textContent = String(n);
  $("noun").textContent = n === 1 ? "like" : "likes";
}, (e) => tell(`The count cannot be read: ${e.message}`, "error"));
onLike(likes, (liked) => {
  button.setAttribute("aria-pressed", String(liked));
  show();
}, (e) => tell(`Your like cannot be read: ${e.message}`, "error"));
button.onclick = () => {
  const on = button.getAttribute("aria-pressed") !== "true";
  button.setAttribute("aria-pressed", String(on)); // at once; the count shows it too
  show();
  tell(navigator.onLine ? "" : "Offline: your like is kept, and sent when you are back.", "info");
  like(likes, on).then(
    () => tell("", "info"),
    (e) => tell(e.status === 401 ? "Please sign in again." : `That did not count: ${e.message}`, "error"),
  );
};

// On the local stack the post is made by the first user signed in, as
// its owner; your app's posts are its own.
async function makePost(u) {
  if (posted || !u) return;
  if (!(await getDoc(doc(db, post))).exists()) await setDoc(doc(db, post), { title: "A post", owner: u.uid });
  posted = true;
  show();
}

onAuthStateChanged(auth, (u) => {
  user = u;
  makePost(u).catch((e) => tell(`The post cannot be made: ${e.message}`, "error"));
  $("signin").hidden = !!u;
  $("signedin").hidden = !u;
  $("who").textContent = u?.email ?? "";
  show();
});
wireSignIn(auth, $("signin"), tell);
$("signout").onclick = () => signOut(auth);
