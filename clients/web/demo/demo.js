// The page tally serve serves at /demo, on the web client: a feed of posts
// whose likes and views are counted on the posts (TALLY_COUNTS), with their
// count of comments where one is declared (comments=count(comments)), or one
// counter of its own (/demo?counter=NAME). Bundled with the Firebase SDK
// into internal/stack/demo/demo.js by `npm run demo`.
import { initializeApp } from "firebase/app";
import {
  connectAuthEmulator, createUserWithEmailAndPassword, getAuth, onAuthStateChanged,
  signInWithEmailAndPassword, signOut,
} from "firebase/auth";
import { collection, connectFirestoreEmulator, getFirestore, limit, onSnapshot, orderBy, query } from "firebase/firestore";

import { addChild, addTo, countRef, getTally, onCount, onVote, vote } from "../src/index.js";

const $ = (id) => document.getElementById(id);
const config = JSON.parse($("config").textContent);
const app = initializeApp({ projectId: config.project, apiKey: "demo-api-key" });
const db = config.database === "(default)" ? getFirestore(app) : getFirestore(app, config.database);
const [host, port] = config.firestoreHost.split(":");
connectFirestoreEmulator(db, host, Number(port));
const auth = getAuth(app);
if (config.authHost) connectAuthEmulator(auth, `http://${config.authHost}`, { disableWarnings: true });
const tally = getTally(app, { url: "/Increment", collection: config.collection, voters: config.voters, firestore: db, auth });

const problem = (e) => ($("problem").textContent = `Refused: ${e.message}`);

// Likes are votes, one per signed-in user; without sign-in, steps of one.
function like(ref, on) {
  $("problem").textContent = "";
  return config.authHost ? vote(ref, on) : addTo(ref, on ? 1 : -1);
}

// Sign-in: the Auth emulator takes any email, and a password of 6 or more.
$("signin-form").hidden = !config.authHost;
$("signin").onclick = async () => {
  const email = $("email").value, password = $("password").value;
  try {
    await signInWithEmailAndPassword(auth, email, password).catch(() => createUserWithEmailAndPassword(auth, email, password));
  } catch (e) {
    $("problem").textContent = `Sign-in failed: ${e.code ?? e.message}`;
  }
};
$("signout").onclick = () => signOut(auth);
const signedIn = new Promise((resolve) => {
  onAuthStateChanged(auth, (user) => {
    $("signin-form").hidden = !config.authHost || !!user;
    $("signed-in").hidden = !user;
    $("who").textContent = user?.email ?? "";
    $("voting").hidden = config.authHost && !user; // likes are votes: signed in only
    if (user || !config.authHost) resolve();
  });
});

const params = new URLSearchParams(location.search);
if (config.feed && !params.has("counter")) feed(config.feed);
else one(params.get("counter") || "demo-likes");

// one shows a counter of the guide layout, as the demo has since its first.
function one(name) {
  $("one").hidden = false;
  $("counter").textContent = name;
  const ref = countRef(tally, name);
  onCount(ref, (n) => ($("total").textContent = String(n)), problem);
  if (config.authHost) onVote(ref, (v) => $("like").setAttribute("aria-pressed", String(v)));
  const say = (on) => (a) => {
    if (on) $("result").textContent = a.changed ? "Your like counts." : "Your like was already counted.";
    else $("result").textContent = a.changed ? "Your like is taken back." : "You had no like to take back.";
  };
  $("like").onclick = () => like(ref, true).then(say(true), problem);
  $("unlike").onclick = () => like(ref, false).then(say(false), problem);
}

// feed lists the posts, most liked first, each with its likes and views.
function feed({ collection: name, like: likes, view: views, comments, children }) {
  $("feed").hidden = false;
  $("collection").textContent = name;
  const shown = new Map();
  onSnapshot(query(collection(db, name), orderBy(likes, "desc"), limit(20)), (snap) => {
    for (const d of snap.docs) {
      if (!shown.has(d.id)) shown.set(d.id, post(`${name}/${d.id}`, likes, views, comments, children));
      const el = shown.get(d.id);
      el.querySelector("h2").textContent = d.get("title") ?? d.id;
      $("posts").append(el); // in the query's order
    }
  }, problem);
}

function post(path, likes, views, comments, children) {
  const el = document.createElement("article");
  el.dataset.id = path.split("/").pop();
  el.innerHTML = `<h2></h2><button class="like" aria-pressed="false">Like</button> <span class="likes">…</span> likes` +
    (views ? ` · <span class="views">…</span> views` : "") +
    (comments ? ` · <span class="comments">…</span> comments` +
      `<form class="comment" hidden><input name="text" placeholder="Say something" required maxlength="500"> <button>Comment</button></form>` : "");
  if (comments) {
    // A comment shows in the count at once, and once: addChild.
    const counted = countRef(tally, path, comments);
    onCount(counted, (n) => (el.querySelector(".comments").textContent = String(n)), problem);
    const form = el.querySelector("form");
    onAuthStateChanged(auth, (user) => (form.hidden = !user)); // the rules let signed-in users comment
    form.onsubmit = (e) => {
      e.preventDefault();
      const text = form.elements.namedItem("text");
      addChild(counted, collection(db, `${path}/${children}`), { text: text.value, by: auth.currentUser?.uid ?? null }).catch(problem);
      text.value = "";
    };
  }
  const liked = countRef(tally, path, likes);
  let on = false;
  onCount(liked, (n) => (el.querySelector(".likes").textContent = String(n)), problem);
  if (config.authHost) onVote(liked, (v) => el.querySelector(".like").setAttribute("aria-pressed", String(on = v)));
  el.querySelector(".like").onclick = () => like(liked, !on).catch(problem);
  if (views) {
    const viewed = countRef(tally, path, views);
    onCount(viewed, (n) => (el.querySelector(".views").textContent = String(n)), problem);
    signedIn.then(() => addTo(viewed, 1)).catch(problem);
  }
  return el;
}
